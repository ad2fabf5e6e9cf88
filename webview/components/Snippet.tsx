/**
 * Where a search found its text: a one-line snippet with the match marked, and what held it (the
 * original output, what the model was sent, the tool's name, the command or file the call named, the call id
 * or the handle). The
 * timeline shows it in each matching turn's row, the turn's details under each matching result.
 */
import * as React from 'react';
import type { SearchMatch } from '../../src/protocol';

const WHERE: Record<SearchMatch['where'], string> = {
  original: 'in the original',
  projected: 'in what the model was sent',
  tool: 'in the tool name',
  command: 'in the command',
  file: 'in the file name',
  'call id': 'in the call id',
  handle: 'in the handle',
};

export function Snippet(props: { match: SearchMatch; className?: string; withTool?: boolean }) {
  const { match: m } = props;
  const at = Math.min(m.at, m.snippet.length);
  const end = Math.min(at + m.length, m.snippet.length);
  const label = `${props.withTool ? `${m.tool} ` : ''}${WHERE[m.where]}`;
  return (
    <span className={`snippet ${props.className ?? ''}`} data-testid="search-snippet" title={`${label}: ${m.snippet}`}>
      <span className="snippet-where">{label}:</span> {m.snippet.slice(0, at)}
      <mark>{m.snippet.slice(at, end)}</mark>
      {m.snippet.slice(end)}
    </span>
  );
}
