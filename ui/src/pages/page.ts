import type { Backend } from '../backend/types';
import type { Route } from '../lib/router';

export interface PageContext {
  backend: Backend;
  route: Route;
}

/** A mounted page: its element, and a refresh that reloads its data (on live updates) without
 *  touching what a person is typing in its forms. */
export interface Page {
  title: string;
  element: HTMLElement;
  refresh(): Promise<void>;
  dispose?(): void;
}
