import { Component, type ErrorInfo, type ReactNode } from "react";
import { errorMessage } from "../ipc";

interface Props {
  children: ReactNode;
  /** What the boundary guards, for the message: "This page", "Perch". */
  what: string;
  /** A change of this value (the page's address) clears a failure and renders again. */
  resetOn?: unknown;
}

/**
 * A throw while rendering shows what failed here, with a way out, instead of blanking the
 * window (React unmounts the whole tree on an uncaught render error). Nothing the user typed
 * is lost: the draft lives in local storage and the history in the database.
 */
export class ErrorBoundary extends Component<Props, { error: unknown }> {
  state = { error: null as unknown };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  componentDidUpdate(previous: Props) {
    if (this.state.error !== null && !Object.is(previous.resetOn, this.props.resetOn)) this.setState({ error: null });
  }

  componentDidCatch(error: unknown, info: ErrorInfo) {
    console.error(`${this.props.what} failed to render`, error, info.componentStack);
  }

  render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="error-card render-error" role="alert">
        <strong>{this.props.what} stopped working</strong>
        <p>{errorMessage(this.state.error)}</p>
        <p className="muted">Your messages and settings are saved. Try again, or reload Perch.</p>
        <div className="render-error-actions">
          <button type="button" className="button" onClick={() => this.setState({ error: null })}>
            Try again
          </button>
          <button type="button" className="button" onClick={() => window.location.reload()}>
            Reload Perch
          </button>
        </div>
      </div>
    );
  }
}
