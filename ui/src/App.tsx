import { useCallback, useEffect, useRef, useState } from 'react';
import { getSettings, type Conversation, type ConversationId, type MessageId, type SearchHit, type Settings, type Theme } from './ipc';
import { Composer, type ComposerHandle } from './components/Composer';
import { ErrorBanner, Notice } from './components/ErrorBanner';
import { GetModels } from './components/GetModels';
import { MarkdownWarmUp } from './components/Markdown';
import { MessageList } from './components/MessageList';
import { ChatSystemPrompt } from './components/ChatSystemPrompt';
import { ThinkingSwitch } from './components/ThinkingSwitch';
import { ReasoningEffortSelect } from './components/ReasoningEffortSelect';
import { ModelPicker, NoModels } from './components/ModelPicker';
import { RemoteBadge } from './components/RemoteBadge';
import { ServerBadge } from './components/ServerBadge';
import { SettingsPane } from './components/SettingsPane';
import { ShortcutsDialog } from './components/ShortcutsDialog';
import { Sidebar, type SidebarHandle } from './components/Sidebar';
import { recordingProblem } from './lib/capabilities';
import { isTextField, shortcutKeys, withShortcut } from './lib/shortcuts';
import { useChat } from './state/useChat';
import { useConversations } from './state/useConversations';
import { useDownloads } from './state/useDownloads';
import { useFileDrop } from './state/useFileDrop';
import { useModel } from './state/useModel';
import { usePendingAttachments } from './state/usePendingAttachments';
import { useProviders } from './state/useProviders';
import { useServerStatus } from './state/useServerStatus';
import { useTheme } from './state/useTheme';
import { Icon } from './components/Icon';
import { Welcome } from './components/Welcome';

export function App() {
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [settings, setSettings] = useState<Settings | null>(null);
  const [themePreview, setThemePreview] = useState<Theme | null>(null);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const [getModelsOpen, setGetModelsOpen] = useState(false);
  const [shortcutsOpen, setShortcutsOpen] = useState(false);
  const closeShortcuts = useCallback(() => setShortcutsOpen(false), []);
  const [focusMessage, setFocusMessage] = useState<MessageId | null>(null);
  const [sidebarHidden, setSidebarHidden] = useState(false);
  // The thinking switch of a chat not made yet (an open chat keeps its own).
  const [newChatThinking, setNewChatThinking] = useState(true);
  const sidebar = useRef<SidebarHandle>(null);
  const composer = useRef<ComposerHandle>(null);

  const showError = useCallback((message: string) => setError(message), []);
  const showNotice = useCallback((message: string) => setNotice(message), []);

  useTheme(themePreview ?? settings?.theme ?? 'system');
  useEffect(() => {
    getSettings().then(setSettings, () => {
      /* The defaults (system theme) stand; the settings pane shows the error if it persists. */
    });
  }, []);

  const conversations = useConversations(showError);
  const conversationsRef = useRef<Conversation[]>([]);
  conversationsRef.current = conversations.items;
  const findConversation = useCallback((id: ConversationId) => conversationsRef.current.find((c) => c.id === id), []);

  const chat = useChat({ onError: showError, onTouched: conversations.touch, findConversation, newChatThinking });
  const models = useModel();
  const providers = useProviders();
  const server = useServerStatus();
  // A finished download is a new model for the picker.
  const downloads = useDownloads(models.refreshModels, showError);
  const loaded = models.state.loaded;
  const remote = providers.current;
  // What attachments are checked against: the remote model when one is picked.
  const replier = remote
    ? { name: `${remote.model.id} on ${remote.provider.name}`, vision: remote.model.vision, audio: remote.model.audio, video: false }
    : loaded;
  const attachments = usePendingAttachments({ loaded: replier, models: models.models ?? [], onError: showError, onNotice: showNotice });

  // Loading a local model takes replies back from a remote one (the backend says so in its list,
  // before the load starts): asked again as a load starts and as it ends, so that the header
  // names the model that will answer.
  const { refresh: refreshProviders } = providers;
  const loadedPath = loaded?.path;
  const loadingPath = models.state.loading?.path;
  useEffect(() => {
    if (loadedPath || loadingPath) refreshProviders();
  }, [loadedPath, loadingPath, refreshProviders]);
  const dragging = useFileDrop((paths) => void attachments.addPaths(paths));

  const { open: openChat, conversationId } = chat;
  const newChat = useCallback(() => {
    openChat(null);
    setFocusMessage(null);
    composer.current?.focus();
  }, [openChat]);

  const openConversation = useCallback(
    (id: ConversationId) => {
      setFocusMessage(null);
      if (id !== conversationId) openChat(id);
    },
    [openChat, conversationId],
  );

  const openHit = useCallback(
    (hit: SearchHit) => {
      if (hit.conversation_id !== conversationId) openChat(hit.conversation_id);
      setFocusMessage(hit.message_id);
    },
    [openChat, conversationId],
  );

  const { regenerate, edit, continueReply } = chat;
  const regenerateReply = useCallback((reply: MessageId) => void regenerate(reply), [regenerate]);
  const continueStopped = useCallback((reply: MessageId) => void continueReply(reply), [continueReply]);
  const editMessage = useCallback((message: MessageId, text: string) => void edit(message, text), [edit]);

  const { remove: removeConversation } = conversations;
  const deleteConversation = useCallback(
    (id: ConversationId) => {
      // A chat that could not be deleted stays open, so its reply stays in sight.
      void removeConversation(id).then((removed) => {
        if (removed && id === conversationId) openChat(null);
      });
    },
    [removeConversation, conversationId, openChat],
  );

  // New model folders may hold new models.
  const { refreshModels } = models;
  const saved = useCallback(
    (next: Settings) => {
      setSettings(next);
      refreshModels();
    },
    [refreshModels],
  );

  const closeSettings = useCallback(() => {
    setThemePreview(null);
    setSettingsOpen(false);
  }, []);

  // Window-wide shortcuts. Esc closes what is open first, and only then stops a reply.
  const { stop, streaming } = chat;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const mod = event.metaKey || event.ctrlKey;
      if (mod && event.key.toLowerCase() === 'n') {
        event.preventDefault();
        newChat();
      } else if (mod && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        sidebar.current?.focusSearch();
      } else if (mod && event.key === ',') {
        event.preventDefault();
        setSettingsOpen(true);
      } else if (event.key === '?' && !mod && !event.altKey && !event.defaultPrevented && !isTextField(event.target)) {
        if (getModelsOpen || settingsOpen) return;
        event.preventDefault();
        setShortcutsOpen(true);
      } else if (event.key === 'Escape' && !event.defaultPrevented) {
        if (shortcutsOpen) setShortcutsOpen(false);
        else if (getModelsOpen) setGetModelsOpen(false);
        else if (settingsOpen) closeSettings();
        else if (streaming) stop();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [closeSettings, getModelsOpen, newChat, settingsOpen, shortcutsOpen, stop, streaming]);

  const streamingHere = chat.streaming !== null && chat.streaming.conversation === chat.conversationId;
  const blockedReason = remote
    ? chat.streaming && !streamingHere
      ? 'Another chat is still replying.'
      : null
    : models.status === 'starting'
      ? 'Starting…'
      : models.state.loading
        ? 'Loading model…'
        : !loaded
          ? models.models?.length === 0
            ? 'No models found: add a folder with models in Settings.'
            : 'Choose a model to start chatting.'
          : chat.streaming && !streamingHere
            ? 'Another chat is still replying.'
            : null;

  const openConversationEntry = chat.conversationId === null ? undefined : conversations.items.find((c) => c.id === chat.conversationId);
  // What the context count depends on besides the draft: a change counts again.
  const lastMessage = chat.messages.at(-1)?.message;
  const contextKey = [
    lastMessage?.id,
    lastMessage?.status,
    chat.streaming !== null,
    loaded?.path,
    remote?.model.id,
    settings?.max_tokens,
    settings?.system_prompt,
    openConversationEntry?.system_prompt,
  ].join('|');

  const emptyChat = chat.loading ? (
    <p className="muted">Loading…</p>
  ) : models.models?.length === 0 && !loaded ? (
    <NoModels error={models.listError} />
  ) : (
    <Welcome
      firstRun={conversations.items.length === 0}
      where={`${
        remote ? `Messages in this chat go to ${remote.provider.name} (${remote.provider.base_url}).` : 'Everything stays on this computer.'
      } Drop images, audio, video or documents here to ask about them; ${shortcutKeys('search')} searches past chats.`}
      onPick={(prompt) => composer.current?.fill(prompt)}
    />
  );

  return (
    <div className={`app-shell${sidebarHidden ? ' sidebar-hidden' : ''}`}>
      {/* The first Tab stop: past the chat list and the header, shown only when focused. */}
      <a
        href="#message-box"
        className="skip-link"
        data-testid="skip-link"
        onClick={(event) => {
          event.preventDefault();
          composer.current?.focus();
        }}
      >
        Skip to message box
      </a>
      <Sidebar
        ref={sidebar}
        conversations={conversations}
        onDelete={deleteConversation}
        selected={chat.conversationId}
        onOpen={openConversation}
        onOpenHit={openHit}
        onNewChat={newChat}
        onError={showError}
      />
      <main className="chat">
        {/* For screen readers: the page's name, as its first heading. */}
        <h1 className="visually-hidden">Confab</h1>
        <header className="chat-header">
          <button
            type="button"
            className="icon-button"
            data-testid="sidebar-toggle"
            aria-label={sidebarHidden ? 'Show the chat list' : 'Hide the chat list'}
            aria-expanded={!sidebarHidden}
            title={sidebarHidden ? 'Show the chat list' : 'Hide the chat list'}
            onClick={() => setSidebarHidden(!sidebarHidden)}
          >
            <Icon name="sidebar" />
          </button>
          <ModelPicker
            models={models}
            serverLoaded={server?.loaded.map((m) => m.path) ?? []}
            providers={providers}
            onError={showError}
            onGetModels={() => setGetModelsOpen(true)}
            settings={settings}
            onSettingsSaved={setSettings}
          />
          <div className="header-end">
            {/* Only where the loaded model's template can turn its thinking off. */}
            {!remote && loaded?.thinking_switch && (chat.conversationId === null || openConversationEntry) && (
              <ThinkingSwitch
                conversation={openConversationEntry}
                newChatOn={newChatThinking}
                onNewChatChange={setNewChatThinking}
                onSaved={conversations.replace}
                onError={showError}
              />
            )}
            {/* Only where the loaded model's template reads `reasoning_effort`. */}
            {!remote && loaded?.reasoning_effort && settings && (
              <ReasoningEffortSelect settings={settings} onSaved={setSettings} onError={showError} />
            )}
            {openConversationEntry && (
              <ChatSystemPrompt
                conversation={openConversationEntry}
                globalPrompt={settings?.system_prompt ?? ''}
                onSaved={conversations.replace}
              />
            )}
            <RemoteBadge current={remote} />
            <ServerBadge status={server} />
            <button type="button" className="ghost small" data-testid="get-models-button" onClick={() => setGetModelsOpen(true)}>
              Get models
            </button>
            <button
              type="button"
              className="icon-button"
              data-testid="settings-button"
              title={withShortcut('Settings', 'settings')}
              aria-label="Settings"
              onClick={() => setSettingsOpen(true)}
            >
              <Icon name="sliders" />
            </button>
            <button
              type="button"
              className="icon-button shortcuts-button"
              data-testid="shortcuts-button"
              title={withShortcut('Keyboard shortcuts', 'shortcuts')}
              aria-label="Keyboard shortcuts"
              onClick={() => setShortcutsOpen(true)}
            >
              ?
            </button>
          </div>
        </header>
        <div className="banners">
          {error && <ErrorBanner message={error} onDismiss={() => setError(null)} />}
          {notice && <Notice message={notice} onDismiss={() => setNotice(null)} />}
        </div>
        <MessageList
          conversationId={chat.conversationId}
          messages={chat.messages}
          plans={chat.plans}
          canvas={chat.canvas}
          queued={chat.queued}
          keyOf={chat.keyOf}
          busy={chat.streaming !== null}
          empty={emptyChat}
          focusMessage={focusMessage}
          onRegenerate={regenerateReply}
          onContinue={continueStopped}
          onEdit={editMessage}
          onSelectSibling={chat.selectSibling}
        />
        <Composer
          ref={composer}
          attachments={attachments}
          blockedReason={blockedReason}
          streaming={streamingHere}
          onSend={chat.send}
          onStop={chat.stop}
          conversationId={chat.conversationId}
          contextKey={contextKey}
          onNewChat={newChat}
          recordingProblem={recordingProblem(replier, models.models ?? [])}
        />
        {dragging && (
          <div className="drop-overlay" aria-hidden="true">
            Drop images, audio, video or documents to attach
          </div>
        )}
      </main>
      {getModelsOpen && (
        <GetModels
          downloads={downloads}
          onLoad={(path) => {
            models.load(path);
            setGetModelsOpen(false);
          }}
          onClose={() => setGetModelsOpen(false)}
        />
      )}
      {settingsOpen && (
        <SettingsPane providers={providers} loaded={loaded} onSaved={saved} onPreviewTheme={setThemePreview} onClose={closeSettings} />
      )}
      {shortcutsOpen && <ShortcutsDialog onClose={closeShortcuts} />}
      {/* Not in the UI tests, whose queries would meet the sample. */}
      {import.meta.env.MODE !== 'test' && <MarkdownWarmUp />}
    </div>
  );
}
