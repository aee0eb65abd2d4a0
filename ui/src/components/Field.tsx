import type { ReactNode } from 'react';

/** One labelled settings field: its label, the control, and an optional hint under it. */
export function Field({ label, hint, children }: { label: string; hint?: ReactNode; children: ReactNode }) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      {children}
      {hint && <span className="field-hint muted">{hint}</span>}
    </label>
  );
}
