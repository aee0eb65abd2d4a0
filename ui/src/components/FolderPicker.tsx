// Picks a folder to search for models by browsing instead of typing its path: one folder's
// subfolders at a time (from the backend, read only), the ones holding models marked.
import { useEffect, useId, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { errorMessage, listFolder, type FolderListing } from '../ipc';
import { Icon } from './Icon';

interface Props {
  /** Where to open; the home folder when null. */
  start: string | null;
  onPick: (folder: string) => void;
  onClose: () => void;
}

export function FolderPicker({ start, onPick, onClose }: Props) {
  const [listing, setListing] = useState<FolderListing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const titleId = useId();
  const list = useRef<HTMLUListElement>(null);

  const go = (path: string | null) => {
    listFolder(path).then(
      (found) => {
        setListing(found);
        setError(null);
      },
      (e: unknown) => setError(errorMessage(e)),
    );
  };
  useEffect(() => go(start), [start]);
  // Each folder opened puts the keyboard back at the top of its list.
  useEffect(() => list.current?.querySelector('button')?.focus(), [listing]);

  const models = listing?.models_inside ?? 0;
  return createPortal(
    <div
      className="modal-backdrop"
      onMouseDown={(event) => event.target === event.currentTarget && onClose()}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return;
        // Only this dialog: the settings under it stay open.
        event.stopPropagation();
        onClose();
      }}
    >
      <div className="modal folder-picker" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid="folder-picker">
        <header className="modal-header">
          <h2 id={titleId}>Choose a model folder</h2>
        </header>
        <div className="modal-body">
          <div className="folder-picker-path">
            <button
              type="button"
              className="icon-button"
              aria-label="Up one folder"
              title="Up one folder"
              disabled={!listing?.parent}
              onClick={() => listing?.parent && go(listing.parent)}
              data-testid="folder-picker-up"
            >
              <Icon name="up" />
            </button>
            <code data-testid="folder-picker-path">{listing?.path ?? '…'}</code>
          </div>
          {error && (
            <p className="error-text" role="alert" data-testid="folder-picker-error">
              {error}
            </p>
          )}
          <ul className="folder-picker-list" ref={list} aria-label="Folders">
            {listing?.folders.map((folder) => (
              <li key={folder.path}>
                <button
                  type="button"
                  onClick={() => go(folder.path)}
                  data-testid="folder-picker-entry"
                  data-name={folder.name}
                  data-has-model={folder.has_model}
                >
                  <Icon name="folder" />
                  <span>{folder.name}</span>
                  {folder.has_model && <span className="badge">models</span>}
                </button>
              </li>
            ))}
            {listing && listing.folders.length === 0 && <li className="muted">No folders inside.</li>}
          </ul>
          <p className="field-hint muted" data-testid="folder-picker-models">
            {models === 0
              ? 'No models directly in this folder; its subfolders are searched too.'
              : `${models} ${models === 1 ? 'model' : 'models'} directly in this folder; its subfolders are searched too.`}
          </p>
        </div>
        <footer className="modal-footer">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className="primary"
            disabled={!listing}
            onClick={() => listing && onPick(listing.path)}
            data-testid="folder-picker-choose"
          >
            Use this folder
          </button>
        </footer>
      </div>
    </div>,
    document.body,
  );
}
