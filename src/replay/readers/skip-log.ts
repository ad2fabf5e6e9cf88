/**
 * The tally of everything a reader did not turn into items. Real session files hold records the
 * replay has no use for (progress events, snapshots), records it does not know yet (newer agent
 * versions) and lines cut short by a crash; each is counted by reason so a replay can say what it
 * left out, and the unexpected ones get a note naming the line.
 */
import type { SkippedRecords } from './types';

/**
 * Notes are for a person reading a report. A file with a million broken lines should not produce a
 * million notes: past this many, only the count of the ones left out is kept.
 */
const MAX_NOTES = 200;

export class SkipLog {
  private total = 0;
  private readonly byReason: Record<string, number> = {};
  private readonly notes: string[] = [];
  private notesLeftOut = 0;
  private readonly notedReasons = new Set<string>();

  /** Counts one skipped record under `reason`, with an optional note. */
  skip(reason: string, note?: string): void {
    this.total += 1;
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
    if (note !== undefined) this.note(note);
  }

  /** Counts one skipped record; only the first record of each reason gets its note. */
  skipNoteFirst(reason: string, note: string): void {
    const first = !this.notedReasons.has(reason);
    this.notedReasons.add(reason);
    this.skip(reason, first ? note : undefined);
  }

  /** A note about something that is not a skipped record (a compaction, a rewound branch). */
  note(text: string): void {
    if (this.notes.length < MAX_NOTES) this.notes.push(text);
    else this.notesLeftOut += 1;
  }

  result(): SkippedRecords {
    const notes = this.notesLeftOut > 0 ? [...this.notes, `${this.notesLeftOut} more note(s) not shown`] : [...this.notes];
    return { total: this.total, byReason: { ...this.byReason }, notes };
  }
}

/** A short, single-line rendering of a value for notes and error messages. */
export function preview(value: string, max = 60): string {
  const oneLine = JSON.stringify(value.length > max ? value.slice(0, max) : value);
  return value.length > max ? `${oneLine}…` : oneLine;
}
