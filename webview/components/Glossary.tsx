/**
 * The words the inspector uses, defined once: each use of one is a `Term` whose hover (and screen
 * reader description) gives the definition, and the header links to the whole list. A new user
 * should not need the README to read the header (issue 22: "cache-stable", "read-backs" were jargon).
 */
import * as React from 'react';

export const GLOSSARY = {
  clear: 'An old tool result replaced by a short notice with its handle, once the context grew past the trigger. The full text is kept.',
  preview:
    'The start and end of a large tool output, sent to the model in its place with a header and the handle, so the model sees what matters and can read the rest back.',
  reference:
    "A tool output that repeats an earlier one in the conversation, sent as a note pointing at that earlier copy (offload.dedupe) instead of a second copy or a preview: one line when identical, else the earlier copy's line ranges and the lines that differ. The full text is kept under its handle.",
  'file input':
    'What the agent wrote to a file (a Write or Edit call, an apply_patch, the body of a heredoc), replaced by a marker with the path and a handle once the conversation is long. The file on disk holds it.',
  handle: 'The id of a stored output (sw_…). The agent, or you, can read it back in part or in whole; nothing reduced is lost.',
  'cache-stable':
    "The call's request starts with the whole previous request, so the provider's prompt cache serves that part at a fraction of the price.",
  'read-back':
    'A call the agent would make to read a stored output again, because what the model was sent hid something it needed. Its price is added to the cost.',
  miss: 'An identifier (a path, a name, a code) the agent wrote in its next reply that was in its full context but not in what Spillway sent.',
  'sent whole':
    "A tool result the model was sent exactly as the tool returned it: nothing saved, nothing hidden, no handle. Most are under their tool's cap; some are over it and kept whole on purpose, and the row says why: a read the agent asked for (a file, git show, a fetched page) stays whole while the agent is using it, up to offload.keepReads (64,000 characters by default), and is cleared once it is no longer used.",
  kept: 'A reduction decided in an earlier turn and sent again the same way in this one (sticky), so the request keeps its prefix and the prompt cache keeps hitting.',
  oracle:
    'A reducer that needs hindsight, measured on a replayed session: it keeps of each tool output, on arrival, only the lines holding what the agent writes later, and clears them once the agent has written them, so it never causes a read-back. Its cost is the limit of what a reducer that never hides anything the agent uses can save.',
  "share of the oracle's saving":
    'Of what the oracle saves against raw history, the part these settings save too, with read-backs priced: (raw − cost) ÷ (raw − oracle). 100% means nothing is left to win without hiding what the agent uses; over 100%, the settings save more than the oracle by hiding a little and paying its read-backs.',
  'records skipped':
    "Lines of a replayed transcript that are not part of the conversation the model was sent (the agent's own bookkeeping, a sub-agent's lines, a resumed session's copy of its history, a broken line): counted and left out of the replay. Spillway's log names each kind.",
} as const;
export type GlossaryWord = keyof typeof GLOSSARY;

/** A word of the glossary, underlined, its definition on hover (and `more` after it, when given). */
export function Term(props: { word: GlossaryWord; children?: React.ReactNode; className?: string; more?: string }) {
  const title = props.more ? `${GLOSSARY[props.word]} ${props.more}` : GLOSSARY[props.word];
  return (
    <span className={`term${props.className ? ` ${props.className}` : ''}`} title={title} data-term={props.word}>
      {props.children ?? props.word}
    </span>
  );
}

/**
 * The whole glossary, folded under a link-sized summary; open, it lies over the content below the
 * header (a popover, styles.css `.glossary-body`) rather than pushing the timeline down, and Escape
 * or its Close button folds it again.
 */
export function Glossary() {
  const ref = React.useRef<HTMLDetailsElement>(null);
  const close = () => {
    if (!ref.current) return;
    ref.current.open = false;
    ref.current.querySelector('summary')?.focus();
  };
  return (
    <details
      className="glossary"
      data-testid="glossary"
      ref={ref}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && ref.current?.open) {
          e.preventDefault();
          close();
        }
      }}
    >
      <summary>What the words mean</summary>
      <div className="glossary-body" role="region" aria-label="What the words mean">
        <button type="button" className="link glossary-close" onClick={close}>
          Close
        </button>
        <dl>
          {(Object.keys(GLOSSARY) as GlossaryWord[]).map((w) => (
            <React.Fragment key={w}>
              <dt>{w}</dt>
              <dd>{GLOSSARY[w]}</dd>
            </React.Fragment>
          ))}
        </dl>
      </div>
    </details>
  );
}
