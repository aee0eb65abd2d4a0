import { Icon } from './Icon';

/** A dismissible error across the top of the chat. */
export function ErrorBanner({ message, onDismiss }: { message: string; onDismiss: () => void }) {
  return (
    <div className="banner error-banner" role="alert" data-testid="error-banner">
      <span className="banner-text">{message}</span>
      <button type="button" className="ghost small" aria-label="Dismiss" onClick={onDismiss}>
        <Icon name="close" size={14} />
      </button>
    </div>
  );
}

/** Information that is not an error (e.g. what the loaded model can't take). */
export function Notice({ message, onDismiss }: { message: string; onDismiss: () => void }) {
  return (
    <div className="banner notice" role="status" data-testid="notice">
      <span className="banner-text">{message}</span>
      <button type="button" className="ghost small" aria-label="Dismiss" onClick={onDismiss}>
        <Icon name="close" size={14} />
      </button>
    </div>
  );
}
