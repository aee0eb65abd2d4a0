import { StatusPanel } from './StatusPanel';

export function App() {
  return (
    <main className="app">
      <header>
        <h1>Confab</h1>
        <p className="muted">Local, private chat with images and audio.</p>
      </header>
      <StatusPanel />
    </main>
  );
}
