import { Component, type ErrorInfo, type ReactNode } from "react";
import { Trans } from "@lingui/react/macro";
import { errorMessage } from "../ipc";

interface Props {
  children: ReactNode;
  /** The heading when it fails, naming what the boundary guards, in the UI's language:
   * "This page stopped working", "Perch stopped working". */
  title: string;
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
    console.error(`render failed (${this.props.title})`, error, info.componentStack);
  }

  render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="error-card render-error" role="alert">
        <strong>{this.props.title}</strong>
        <p>{errorMessage(this.state.error)}</p>
        <p className="muted">
          <Trans>Your messages and settings are saved. Try again, or reload Perch.</Trans>
        </p>
        <div className="render-error-actions">
          <button type="button" className="button" onClick={() => this.setState({ error: null })}>
            <Trans>Try again</Trans>
          </button>
          <button type="button" className="button" onClick={() => window.location.reload()}>
            <Trans>Reload Perch</Trans>
          </button>
        </div>
      </div>
    );
  }
}
