// The approval popup's input guard. The popup comes up on its own, always on top of whatever the
// person is doing, so a key press or click meant for another window could land on its choices the
// moment it appears. Like the permission prompts of browsers (Firefox re-arms its prompts'
// buttons each time the window is shown or activated, `security.notification_enable_delay`), the
// choices ignore keys and clicks for a moment after the popup appears, is shown again or gets the
// focus, and after the call on screen changes (a double press must not decide the next one too).

/** How long the choices ignore input, in milliseconds. Longer than the gaps between a typist's
 * keys (about 100–300 ms, rarely above half a second), so a burst of typing that starts in another
 * window cannot carry on into the popup; short enough that nobody reads the call faster. */
export const ARM_DELAY_MS = 800;

export class InputGuard {
  private readyAt: number;

  constructor(
    private readonly delayMs: number = ARM_DELAY_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.readyAt = now() + delayMs;
  }

  /** Starts the moment of ignored input again (the popup was shown again, got the focus, or
   * shows another call). Never shortens a moment already running. */
  rearm(): void {
    this.readyAt = Math.max(this.readyAt, this.now() + this.delayMs);
  }

  /** Whether input counts now. */
  ready(): boolean {
    return this.now() >= this.readyAt;
  }

  /** Milliseconds until input counts (0 once it does). */
  remainingMs(): number {
    return Math.max(0, this.readyAt - this.now());
  }
}
