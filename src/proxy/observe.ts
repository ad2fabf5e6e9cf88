/**
 * Observe mode: the proxy forwards every request byte for byte and records what Spillway would have
 * sent, so someone can measure Spillway on their own sessions before letting it change a request.
 *
 * The would-be projection comes from an engine that projects exactly like the one in force but
 * writes no store (those projections are never sent, so no handle of theirs must be on disk; the
 * recorded request keeps every output) and keeps sessions of its own: observing never moves what a
 * projected session already sent, and switching a running session from observe to project starts
 * its projection from the raw history the provider has cached (see docs/trust.md).
 */
import { createEngine, type Engine } from '../engine';

/** What the proxy does with a model call: project it, or only observe what it would have sent. */
export type ProxyMode = 'project' | 'observe';
export const PROXY_MODES: readonly ProxyMode[] = ['project', 'observe'];

const observers = new WeakMap<Engine, Engine>();

/** The engine that computes what `engine` would have sent, without storing anything. */
export function observingEngine(engine: Engine): Engine {
  let e = observers.get(engine);
  if (!e) {
    e = createEngine(engine.config, { store: { put: () => undefined, locate: () => undefined } });
    observers.set(engine, e);
  }
  return e;
}
