/** The inspector webview's entry: one VS Code API handle, one Host, one React root. */
import * as React from 'react';
import { createRoot } from 'react-dom/client';
import { z } from 'zod';
import { App } from './App';
import { Host } from './host';
import './styles.css';

// zod would probe `new Function` for its fast path, which the webview's CSP (rightly) refuses
z.config({ jitless: true });

const host = new Host(acquireVsCodeApi());
createRoot(document.getElementById('root')!).render(<App host={host} />);
