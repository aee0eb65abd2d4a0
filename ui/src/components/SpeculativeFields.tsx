import { useEffect, useState } from 'react';
import {
  draftCandidates,
  errorMessage,
  saveSettings,
  type ModelInfo,
  type ModelSummary,
  type Settings,
  type SpeculativeChoice,
} from '../ipc';
import { Field } from './Field';

/** The methods offered, in the order shown. */
const methods: { value: SpeculativeChoice; label: string }[] = [
  { value: 'off', label: 'Off' },
  { value: 'prompt_lookup', label: 'Prompt lookup (no second model)' },
  { value: 'draft_model', label: 'Draft model' },
];

const methodHints: Record<SpeculativeChoice, string> = {
  off: 'Each token takes a pass of the model.',
  prompt_lookup:
    'Words the reply repeats from the chat are proposed and checked several at a time: the same replies, sooner when quoting or editing.',
  draft_model:
    'A smaller model of the same family proposes the next words and the model checks them several at a time: the same replies, sooner where the two agree.',
};

/** The found models that can draft for the model at `path` (null: none asked; null while looking). */
function useDraftCandidates(path: string | null): ModelSummary[] | null {
  const [candidates, setCandidates] = useState<ModelSummary[] | null>(null);
  useEffect(() => {
    if (path === null) return;
    let live = true;
    setCandidates(null);
    draftCandidates(path).then(
      (found) => live && setCandidates(found),
      () => live && setCandidates([]),
    );
    return () => {
      live = false;
    };
  }, [path]);
  return candidates;
}

/**
 * "Speculative decoding", and for the draft-model choice the loaded model's draft. Only models
 * that share its vocabulary are offered (the engine refuses any other at load, saying why).
 * `draft`: the chosen draft's path; '' for none.
 */
export function SpeculativeFields({
  loaded,
  method,
  draft,
  onChange,
}: {
  loaded: ModelInfo | null;
  method: SpeculativeChoice;
  draft: string;
  onChange: (change: { speculative?: SpeculativeChoice; draft?: string }) => void;
}) {
  const candidates = useDraftCandidates(method === 'draft_model' ? (loaded?.path ?? null) : null);
  const found = candidates ?? [];
  const missing = draft !== '' && candidates !== null && !found.some((model) => model.path === draft);
  const draftHint =
    candidates === null
      ? 'Looking for models that share its vocabulary…'
      : found.length === 0
        ? 'No model in the model folders shares its vocabulary: get a smaller model of the same family in Get models.'
        : missing
          ? 'This draft is no longer in the model folders, or no longer shares the model’s vocabulary.'
          : 'Loaded beside the model (it takes memory too). Saving loads it.';
  return (
    <>
      <Field label="Speculative decoding" hint={methodHints[method]}>
        <select
          data-testid="setting-speculative"
          value={method}
          onChange={(event) => onChange({ speculative: event.target.value as SpeculativeChoice })}
        >
          {methods.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </select>
      </Field>
      {method === 'draft_model' && loaded && (
        <Field label={`Draft model for ${loaded.name}`} hint={draftHint}>
          <select data-testid="setting-draft_model" value={draft} onChange={(event) => onChange({ draft: event.target.value })}>
            <option value="">None (decode plainly)</option>
            {found.map((model) => (
              <option key={model.path} value={model.path}>
                {model.name} · {model.quantization}
              </option>
            ))}
            {missing && <option value={draft}>{draft} (not offered)</option>}
          </select>
        </Field>
      )}
    </>
  );
}

/** A draft choice's value in the picker's one select: `draft:` and the draft's path. */
const DRAFT = 'draft:';

/**
 * The picker's speculative decoding choice for the loaded model: off, prompt lookup, or a found
 * model sharing its vocabulary as its draft, in one select. Saved with the settings at once, as
 * Settings › Model saves it (saving loads the draft beside the model).
 */
export function SpeculativePick({
  loaded,
  settings,
  onSaved,
  onError,
}: {
  loaded: ModelInfo;
  settings: Settings;
  onSaved: (settings: Settings) => void;
  onError: (message: string) => void;
}) {
  const candidates = useDraftCandidates(loaded.path);
  const [saving, setSaving] = useState(false);
  const draft = settings.model_drafts[loaded.path] ?? '';
  const value = settings.speculative !== 'draft_model' ? settings.speculative : draft === '' ? 'draft_model' : DRAFT + draft;
  const offered = (candidates ?? []).some((model) => DRAFT + model.path === value);

  const change = (choice: string) => {
    const drafting = choice.startsWith(DRAFT);
    const speculative: SpeculativeChoice = drafting ? 'draft_model' : (choice as SpeculativeChoice);
    const model_drafts = drafting ? { ...settings.model_drafts, [loaded.path]: choice.slice(DRAFT.length) } : settings.model_drafts;
    setSaving(true);
    saveSettings({ ...settings, speculative, model_drafts })
      .then(onSaved, (e: unknown) => onError(`Could not change speculative decoding: ${errorMessage(e)}`))
      .finally(() => setSaving(false));
  };

  return (
    <label className="picker-speculative" title={methodHints[settings.speculative]}>
      Speculative decoding
      <select data-testid="picker-speculative" value={value} disabled={saving} onChange={(event) => change(event.target.value)}>
        {methods
          .filter((choice) => choice.value !== 'draft_model' || value === 'draft_model')
          .map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.value === 'draft_model' ? 'Draft model (none chosen)' : choice.label}
            </option>
          ))}
        {(candidates ?? []).map((model) => (
          <option key={model.path} value={DRAFT + model.path}>
            Draft: {model.name} · {model.quantization}
          </option>
        ))}
        {value.startsWith(DRAFT) && !offered && <option value={value}>Draft: {draft}</option>}
      </select>
    </label>
  );
}
