// How hard the model reasons, for a model whose template reads `reasoning_effort` (gpt-oss's
// "Reasoning: low|medium|high"). Saved with the settings, so every chat with such a model takes
// it; "Model's own" leaves the template's default.
import { useState } from 'react';
import { errorMessage, saveSettings, type ReasoningEffort, type Settings } from '../ipc';

const CHOICES: { value: ReasoningEffort | null; label: string }[] = [
  { value: null, label: "Model's own" },
  { value: 'low', label: 'Low' },
  { value: 'medium', label: 'Medium' },
  { value: 'high', label: 'High' },
];

interface Props {
  settings: Settings;
  onSaved: (settings: Settings) => void;
  onError: (message: string) => void;
}

export function ReasoningEffortSelect({ settings, onSaved, onError }: Props) {
  const [saving, setSaving] = useState(false);

  const change = (value: string) => {
    const effort = CHOICES.find((choice) => (choice.value ?? '') === value)?.value ?? null;
    setSaving(true);
    saveSettings({ ...settings, reasoning_effort: effort })
      .then(onSaved, (e: unknown) => onError(`Could not change the reasoning effort: ${errorMessage(e)}`))
      .finally(() => setSaving(false));
  };

  return (
    <label className="thinking-switch" title="How hard the model reasons before it answers">
      Reasoning
      <select
        data-testid="reasoning-effort"
        value={settings.reasoning_effort ?? ''}
        disabled={saving}
        onChange={(event) => change(event.target.value)}
      >
        {CHOICES.map((choice) => (
          <option key={choice.label} value={choice.value ?? ''}>
            {choice.label}
          </option>
        ))}
      </select>
    </label>
  );
}
