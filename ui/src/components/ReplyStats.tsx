import type { Plan, ReplyStats as Stats } from '../ipc';
import { humanDuration } from '../lib/format';

/** "42 tokens · 31.2 tok/s · 180 ms to first token · 120 cached" under a finished reply. */
export function ReplyStats({ stats }: { stats: Stats }) {
  const parts = [`${stats.generated_tokens} tokens`];
  if (stats.decode_tokens_per_second !== null) parts.push(`${stats.decode_tokens_per_second.toFixed(1)} tok/s`);
  if (stats.time_to_first_token_ms !== null) parts.push(`${humanDuration(stats.time_to_first_token_ms)} to first token`);
  parts.push(`${stats.cached_tokens} of ${stats.prompt_tokens} prompt tokens cached`);
  return (
    <div className="reply-stats" data-testid="reply-stats" title={stats.model}>
      {parts.join(' · ')}
    </div>
  );
}

/** What the engine planned to reuse: "reused 120 of 300 prompt tokens from memory". */
export function planText(plan: Plan): string {
  if (plan.reuse_source === 'none' || plan.reused_tokens === 0) {
    const why = plan.reuse_declined ? ` (cache not used: ${plan.reuse_declined})` : '';
    return `processing ${plan.prompt_tokens} prompt tokens${why}`;
  }
  return `reused ${plan.reused_tokens} of ${plan.prompt_tokens} prompt tokens from ${plan.reuse_source}`;
}

export function PlanLine({ plan }: { plan: Plan }) {
  return (
    <div className="plan" data-testid="plan">
      {planText(plan)}
    </div>
  );
}
