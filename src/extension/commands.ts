/**
 * The `Spillway` commands. Each takes optional arguments that skip its prompts, so other
 * extensions, keybindings and tests can run them without a person at the keyboard.
 */
import * as vscode from 'vscode';
import { errorText, type SpillwayHost } from './host';
import { CAP_CHOICES, parseCapInput, updateToolCaps, SECTION, type CapChoice } from './pure/settings';
import { formatCount, outputPickItem } from './pure/format';
import { firstContentLine, inputDocument, lineHolding } from './pure/documents';
import { sourceLabel } from '../engine/names';
import { recordCallIds, type ProjectedRecord } from './pure/records';

export const COMMANDS = {
  setToolCap: 'spillway.setToolCap',
  openStoredOutput: 'spillway.openStoredOutput',
  compare: 'spillway.compareOriginalAndProjected',
  clear: 'spillway.clearStoredOutputs',
  showLog: 'spillway.showLog',
} as const;

type Target = 'workspace' | 'user';

export function registerCommands(host: SpillwayHost): vscode.Disposable[] {
  const guard =
    <A extends unknown[]>(name: string, fn: (...args: A) => Promise<unknown>) =>
    async (...args: A) => {
      try {
        return await fn(...args);
      } catch (e) {
        host.log.error(`${name} failed: ${errorText(e)}`);
        host.notify('error', `Spillway: ${name} failed: ${errorText(e)}`);
        return undefined;
      }
    };
  return [
    vscode.commands.registerCommand(
      COMMANDS.setToolCap,
      guard('Set Cap for Tool', (tool?: string, cap?: CapChoice, target?: Target) => setToolCap(host, tool, cap, target)),
    ),
    vscode.commands.registerCommand(
      COMMANDS.openStoredOutput,
      guard('Open Stored Output', (handle?: string, opts?: OpenOptions) => openStoredOutput(host, handle, opts)),
    ),
    vscode.commands.registerCommand(
      COMMANDS.compare,
      guard('Compare Original and Projected', (handle?: string, opts?: CompareOptions) => compare(host, handle, opts)),
    ),
    vscode.commands.registerCommand(
      COMMANDS.clear,
      guard('Clear Stored Outputs', (opts?: { confirm?: boolean }) => clearStored(host, opts)),
    ),
    vscode.commands.registerCommand(COMMANDS.showLog, () => host.log.show(true)),
  ];
}

/** Tools seen in the store's index, most frequent first, plus tools that already have a cap. */
function knownTools(host: SpillwayHost): string[] {
  const counts = new Map<string, number>();
  try {
    for (const e of host.store.list()) {
      for (const c of e.calls ?? [{ tool: e.tool }]) counts.set(c.tool, (counts.get(c.tool) ?? 0) + 1);
    }
  } catch (e) {
    host.log.warn(`could not list stored outputs: ${errorText(e)}`);
  }
  const caps = vscode.workspace.getConfiguration(SECTION).get<Record<string, unknown>>('toolCaps') ?? {};
  for (const t of Object.keys(caps)) if (!counts.has(t)) counts.set(t, 0);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([t]) => t);
}

async function pickTool(host: SpillwayHost): Promise<string | undefined> {
  const caps = vscode.workspace.getConfiguration(SECTION).get<Record<string, unknown>>('toolCaps') ?? {};
  const base: vscode.QuickPickItem[] = knownTools(host).map((t) => ({
    label: t,
    description:
      caps[t] !== undefined ? `cap: ${typeof caps[t] === 'number' ? formatCount(caps[t] as number) : String(caps[t])}` : undefined,
  }));
  const qp = vscode.window.createQuickPick();
  qp.title = 'Spillway: Set Cap for Tool (1/3)';
  qp.placeholder = 'Pick a tool seen in recent sessions, or type a tool name';
  qp.items = base;
  qp.onDidChangeValue((v) => {
    const typed = v.trim();
    qp.items = typed && !base.some((i) => i.label === typed) ? [{ label: typed, description: 'type-in tool name' }, ...base] : base;
  });
  return new Promise((resolve) => {
    qp.onDidAccept(() => {
      const picked = qp.selectedItems[0]?.label ?? qp.value.trim();
      resolve(picked || undefined);
      qp.hide();
    });
    qp.onDidHide(() => {
      resolve(undefined);
      qp.dispose();
    });
    qp.show();
  });
}

async function pickCap(tool: string): Promise<CapChoice | undefined> {
  const items: (vscode.QuickPickItem & { cap?: CapChoice })[] = [
    ...CAP_CHOICES.map((n) => ({ label: formatCount(n), description: 'characters (or bytes, per spillway.capUnit)', cap: n as CapChoice })),
    { label: 'unlimited', description: `never reduce ${tool}'s output`, cap: 'unlimited' },
    { label: 'default', description: 'remove the override; use the preset and spillway.defaultCap', cap: 'default' },
    { label: 'Custom…', description: 'type a number' },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: `Spillway: cap for ${tool} (2/3)`, placeHolder: `Cap for ${tool}` });
  if (!picked) return undefined;
  if (picked.cap !== undefined) return picked.cap;
  const typed = await vscode.window.showInputBox({
    title: `Spillway: cap for ${tool}`,
    prompt: 'A positive number of characters, or "unlimited"',
    validateInput: (v) => (parseCapInput(v) === undefined ? 'Enter a positive whole number (e.g. 12000 or 12k) or "unlimited"' : undefined),
  });
  return typed === undefined ? undefined : parseCapInput(typed);
}

async function setToolCap(
  host: SpillwayHost,
  tool?: string,
  cap?: CapChoice,
  target?: Target,
): Promise<Record<string, unknown> | undefined> {
  tool ??= await pickTool(host);
  if (!tool) return undefined;
  if (cap === undefined) cap = await pickCap(tool);
  if (cap === undefined) return undefined;
  const hasFolder = (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
  if (!target) {
    const choices = [
      ...(hasFolder ? [{ label: 'Workspace', description: 'this workspace only', t: 'workspace' as Target }] : []),
      { label: 'User', description: 'every workspace', t: 'user' as Target },
    ];
    target = (await vscode.window.showQuickPick(choices, { title: 'Spillway: where to save the cap (3/3)' }))?.t;
    if (!target) return undefined;
  }
  if (target === 'workspace' && !hasFolder) target = 'user';
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const inspected = cfg.inspect('toolCaps');
  const current = target === 'workspace' ? inspected?.workspaceValue : inspected?.globalValue;
  const next = updateToolCaps(current, tool, cap);
  await cfg.update(
    'toolCaps',
    Object.keys(next).length ? next : undefined,
    target === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global,
  );
  host.log.info(`toolCaps (${target}): ${tool} → ${cap}`);
  return next;
}

/** `beside`: the inspector asks to open next to itself rather than over it; `find`: put the cursor on the first line holding this text. */
/** `viewColumn`: that editor group (the inspector's neighbour); `beside`: next to the active editor. */
type OpenOptions = { beside?: boolean; viewColumn?: number; find?: string };
const column = (o?: OpenOptions) =>
  o?.viewColumn !== undefined ? { viewColumn: o.viewColumn } : o?.beside ? { viewColumn: vscode.ViewColumn.Beside } : {};

async function openStoredOutput(host: SpillwayHost, handle?: string, opts?: OpenOptions): Promise<string | undefined> {
  if (!handle) {
    const entries = host.store.list();
    if (entries.length === 0) {
      host.notify('info', 'Spillway has no stored outputs in this workspace yet.');
      return undefined;
    }
    const now = Date.now();
    const picked = await vscode.window.showQuickPick(
      entries.map((e) => {
        const r = host.record(e.handle);
        const input = r?.input ?? (e.calls ?? []).some((c) => c.stage === 'input');
        const source = r ? recordLabel(r) : undefined;
        const callIds = (e.calls?.length ?? 0) > (r ? recordCallIds(r).length : 0) ? e.calls!.map((c) => c.callId) : r && recordCallIds(r);
        // a file input is sized as the text it opens as (a heredoc's lines), not as the JSON it was sent in
        const shown = input ? inputSize(host, e.handle) : undefined;
        const summary = {
          ...e,
          ...shown,
          time: e.used ?? e.time,
          input,
          ...(source ? { source } : {}),
          ...(r?.command && !input ? { command: r.command } : {}),
          ...(callIds ? { callIds } : {}),
        };
        return { ...outputPickItem(summary, now), handle: e.handle };
      }),
      { title: 'Spillway: Open Stored Output', placeHolder: 'Stored outputs, newest first', matchOnDescription: true, matchOnDetail: true },
    );
    if (!picked) return undefined;
    handle = picked.handle;
  }
  const uri = host.documentUri(handle);
  // openTextDocument goes through the file system provider, which explains a missing output
  const doc = await vscode.workspace.openTextDocument(uri).then(undefined, () => undefined);
  if (!doc) return undefined;
  const at = opts?.find ? lineHolding(doc.getText(), opts.find) : undefined;
  const editor = await vscode.window.showTextDocument(doc, { preview: false, ...column(opts) });
  if (at) {
    const range = new vscode.Range(at.line, at.character, at.line, at.character + opts!.find!.length);
    editor.selection = new vscode.Selection(range.start, range.end);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  } else {
    // a Read from further down a file keeps the file's line numbers with blank lines above: open at its content
    const first = firstContentLine(doc.getText());
    if (first > 0) {
      const start = new vscode.Position(first, 0);
      editor.selection = new vscode.Selection(start, start);
      editor.revealRange(new vscode.Range(start, start), vscode.TextEditorRevealType.AtTop);
    }
  }
  return uri.toString();
}

/** The characters and lines of a file input as its document shows it, or undefined when it cannot be read. */
function inputSize(host: SpillwayHost, handle: string): { chars: number; lines: number } | undefined {
  try {
    const text = inputDocument(host.store.get(handle))?.text;
    return text === undefined ? undefined : { chars: text.length, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) };
  } catch {
    return undefined;
  }
}

/** How a record is named in pickers and titles: the file or command its call named (sourceLabel). */
function recordLabel(r: ProjectedRecord): string | undefined {
  return sourceLabel(
    { ...(r.sourcePath ? { path: r.sourcePath } : {}), ...(r.command ? { command: r.command } : {}) },
    r.input ? 'input' : 'result',
  );
}

/** `marker`: the id of the marker to show (one turn's; the inspector passes it), else the newest. */
type CompareOptions = OpenOptions & { marker?: string };

/** Where a marker was sent, for a picker's description and the diff's title: `clear, turn 22`. */
function markerWhere(m: { stage: string; turn?: number }): string {
  return m.turn !== undefined ? `${m.stage}, turn ${m.turn + 1}` : m.stage;
}

async function compare(host: SpillwayHost, handle?: string, opts?: CompareOptions): Promise<string | undefined> {
  let markerId = opts?.marker;
  if (!handle) {
    const records = host.recordsNewestFirst();
    if (records.length === 0) {
      host.notify('info', 'Spillway has not reduced any tool result in this workspace yet, so there is nothing to compare.');
      return undefined;
    }
    // one row per marker: an output offloaded in one turn and cleared in a later one was sent two
    const items = records.flatMap((r) => {
      const name = `${r.tool}${r.input ? ' · input' : ''} · ${recordLabel(r) ?? recordCallIds(r).join(', ')}`;
      // the command as the agent wrote it, so typing any of it finds the row (the label names what it does)
      const command = r.command && !r.input ? ` · $ ${r.command.trim().split('\n')[0]!.slice(0, 500)}` : '';
      return [...r.markers].reverse().map((m) => ({
        label: name,
        description: `${markerWhere(m)} · ${formatCount(m.text.length)} chars sent`,
        detail: `${m.reason} · ${recordCallIds(r).join(', ')}${command}`,
        handle: r.handle,
        marker: m.id,
      }));
    });
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Spillway: Compare Original and Projected',
      placeHolder: 'Reduced tool results and file inputs, newest first, one row per marker the model was sent',
      matchOnDetail: true,
    });
    if (!picked) return undefined;
    handle = picked.handle;
    markerId = picked.marker;
  }
  const record = host.record(handle);
  const marker = host.marker(handle, markerId ? { id: markerId } : undefined);
  if (!record || !marker) {
    host.notify('error', `Spillway has no projection of ${handle} recorded in this workspace.`);
    return undefined;
  }
  const left = host.documentUri(handle);
  const right = host.documentUri(handle, true, marker.id);
  const name = recordLabel(record) ?? `${record.tool} · ${record.callId}`;
  await vscode.commands.executeCommand('vscode.diff', left, right, `${name}: original ↔ projected (${markerWhere(marker)})`, {
    preview: false,
    ...column(opts),
  });
  return right.toString();
}

async function clearStored(host: SpillwayHost, opts?: { confirm?: boolean }): Promise<boolean> {
  let count = 0;
  try {
    count = host.store.list().length;
  } catch {
    /* count stays unknown */
  }
  if (opts?.confirm !== false) {
    const answer = await vscode.window.showWarningMessage(
      `Delete all ${count} stored outputs of this workspace? Markers that point to them will no longer open.`,
      { modal: true },
      'Clear',
    );
    if (answer !== 'Clear') return false;
  }
  host.clear();
  host.notify('info', `Spillway: cleared ${count} stored outputs.`);
  return true;
}
