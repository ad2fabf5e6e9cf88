/**
 * A proxy between the two fake providers (HTTP for Anthropic calls, the Responses WebSocket for
 * OpenAI ones), collecting its turns: the setup the durability and observe-mode suites share.
 */
import { startProxy, type ProxyOptions, type RunningProxy, type Turn } from '../../src/proxy';
import { startFakeUpstream, type FakeUpstream, type Responder } from './fake-upstream';
import { startFakeResponsesWs, type FakeResponsesWs } from './fake-responses-ws';

export interface ProxyBetweenFakes {
  proxy: RunningProxy;
  upstream: FakeUpstream;
  fakeWs: FakeResponsesWs;
  /** every turn the proxy recorded, in order */
  turns: Turn[];
  close(): Promise<void>;
}

export async function proxyBetweenFakes(options: ProxyOptions, respond?: Responder): Promise<ProxyBetweenFakes> {
  const upstream = await startFakeUpstream(respond ? { respond } : {});
  const fakeWs = await startFakeResponsesWs();
  const proxy = await startProxy({ port: 0, ...options, openaiUpstream: `${fakeWs.url}/v1`, anthropicUpstream: upstream.url });
  const turns: Turn[] = [];
  proxy.on('turn', (t) => turns.push(t));
  return {
    proxy,
    upstream,
    fakeWs,
    turns,
    close: async () => {
      await proxy.close();
      await upstream.close();
      await fakeWs.close();
    },
  };
}
