/** Prompts a small local model answers well: a first message is one click away. */
export const SUGGESTED_PROMPTS = [
  'Explain how a rainbow forms, in simple words.',
  'Write a short poem about the first snow of winter.',
  'Give me three ideas for a quick, healthy dinner.',
  'What are some good questions to ask at a job interview?',
];

interface Props {
  /** No chats yet: the first time Confab opens. */
  firstRun: boolean;
  /** Where replies go, in words. */
  where: string;
  /** Puts the prompt in the message box, ready to send. */
  onPick: (prompt: string) => void;
}

/** The empty chat: what Confab is, and a few prompts to start from. */
export function Welcome({ firstRun, where, onPick }: Props) {
  return (
    <div className="empty-chat" data-testid="welcome">
      <h2>{firstRun ? 'Welcome to Confab' : "What's on your mind?"}</h2>
      <p className="muted">{where}</p>
      <ul className="suggestions" aria-label="Suggested prompts">
        {SUGGESTED_PROMPTS.map((prompt) => (
          <li key={prompt}>
            <button type="button" className="suggestion" data-testid="suggested-prompt" onClick={() => onPick(prompt)}>
              {prompt}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
