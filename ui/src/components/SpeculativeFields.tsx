import { useEffect, useState } from 'react';
import { draftCandidates, type ModelInfo, type ModelSummary, type SpeculativeChoice } from '../ipc';
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
  const [candidates, setCandidates] = useState<ModelSummary[] | null>(null);
  const loadedPath = loaded?.path ?? null;
  useEffect(() => {
    if (method !== 'draft_model' || loadedPath === null) return;
    let live = true;
    setCandidates(null);
    draftCandidates(loadedPath).then(
      (found) => live && setCandidates(found),
      () => live && setCandidates([]),
    );
    return () => {
      live = false;
    };
  }, [method, loadedPath]);

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
