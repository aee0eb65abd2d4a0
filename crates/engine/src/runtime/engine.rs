//! The engine thread: the one place MLX work happens, in order. Callers talk to it by message.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::cache::{EncoderCache, EncoderOptions, PrefixCache, PrefixOptions};

use crate::error::{EngineError, Result};
use crate::media::MediaLimits;
use crate::model::embedding::EmbedPrompt;
use crate::model::LoadOptions;
use crate::runtime::count::TokenCounter;
use crate::runtime::embed::{self, Embeddings};
use crate::runtime::generate;
use crate::runtime::ready_model::{LoadProgress, ModelInfo, ReadyModel};
use crate::runtime::request::{Event, ModelId, Prompt, Request};
use crate::runtime::scheduler::{BatchOptions, Scheduler};
use crate::text::ChatOptions;

#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// MLX keeps freed buffers for reuse up to this many bytes (default: a quarter of memory),
    /// so memory does not grow without bound across requests; never more than the memory
    /// budget leaves unreserved (`BatchOptions::memory_budget`).
    pub mlx_cache_limit: Option<usize>,
    /// The prefix (session) cache: budgets, disk folder, on/off.
    pub prefix: PrefixOptions,
    /// The encoder cache of vision/audio tower outputs: budgets, disk folder (the app's
    /// `<cache folder>/encoder`), on/off. Its disk tier outlives the engine.
    pub encoder: EncoderOptions,
    /// How large an attached image or clip may be.
    pub media_limits: MediaLimits,
    /// How many requests run at once, and the memory they may take.
    pub batch: BatchOptions,
    /// Where videos are read from; `None`: their files (`media::probe_video`, `decode_video`).
    pub video_reader: Option<std::sync::Arc<dyn crate::media::VideoReader>>,
}

/// A session idle this long has its cache written to disk (kept in memory too).
const IDLE_PERSIST: Duration = Duration::from_secs(60);

type ProgressFn = Box<dyn FnMut(LoadProgress) + Send>;

enum Command {
    Load {
        path: PathBuf,
        options: LoadOptions,
        progress: ProgressFn,
        /// The loaded model it is to draft for: kept only where it shares that one's vocabulary.
        draft_for: Option<ModelId>,
        reply: Sender<Result<(ModelId, ModelInfo)>>,
    },
    Unload {
        model: ModelId,
    },
    // Boxed: a request is many times the size of the other commands.
    Generate {
        request: Box<Request>,
        cancel: Arc<AtomicBool>,
        events: Sender<Event>,
    },
    Tokenize {
        model: ModelId,
        prompt: Prompt,
        chat: ChatOptions,
        reply: Sender<Result<Vec<u32>>>,
    },
    Counter {
        model: ModelId,
        reply: Sender<Result<TokenCounter>>,
    },
    Embed {
        model: ModelId,
        texts: Vec<String>,
        prompt: EmbedPrompt,
        reply: Sender<Result<Embeddings>>,
    },
    /// Stop now (see `Engine::shutdown`); `done` is answered once the streams are idle.
    Shutdown {
        done: Sender<()>,
    },
}

pub struct Engine {
    commands: Option<Sender<Command>>,
    thread: Option<JoinHandle<()>>,
}

/// A running request: its events, and the switch that stops it within one decode step.
pub struct Generation {
    events: Receiver<Event>,
    cancel: Arc<AtomicBool>,
}

impl Generation {
    /// The next event; `None` after `Done` or `Error`.
    pub fn next(&self) -> Option<Event> {
        self.events.recv().ok()
    }

    /// The next event if one has arrived, without waiting.
    pub fn try_next(&self) -> Option<Event> {
        self.events.try_recv().ok()
    }

    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// A handle that cancels from another thread (the UI's Stop button).
    pub fn canceller(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }
}

impl Iterator for Generation {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        Generation::next(self)
    }
}

impl Engine {
    pub fn start(options: EngineOptions) -> Result<Self> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("confab-engine".into())
            .spawn(move || serve(options, rx))
            .map_err(|e| EngineError::Internal(format!("could not start the engine thread: {e}")))?;
        Ok(Self { commands: Some(tx), thread: Some(thread) })
    }

    fn send(&self, command: Command) -> Result<()> {
        self.commands.as_ref().and_then(|c| c.send(command).ok()).ok_or(EngineError::EngineStopped)
    }

    /// Loads a model folder or GGUF file; blocks until it is ready.
    pub fn load(
        &self,
        path: impl Into<PathBuf>,
        options: LoadOptions,
        progress: impl FnMut(LoadProgress) + Send + 'static,
    ) -> Result<(ModelId, ModelInfo)> {
        let (reply, answer) = mpsc::channel();
        self.send(Command::Load { path: path.into(), options, progress: Box::new(progress), draft_for: None, reply })?;
        answer.recv().map_err(|_| EngineError::EngineStopped)?
    }

    /// Loads a draft model for speculative decoding (`Speculative::DraftModel`) beside the
    /// loaded `model`; blocks until it is ready. A draft whose vocabulary is not the model's is
    /// refused (`EngineError::DraftVocabulary`, naming the mismatch) and not kept.
    pub fn load_draft(
        &self,
        model: ModelId,
        path: impl Into<PathBuf>,
        options: LoadOptions,
        progress: impl FnMut(LoadProgress) + Send + 'static,
    ) -> Result<(ModelId, ModelInfo)> {
        let (reply, answer) = mpsc::channel();
        self.send(Command::Load { path: path.into(), options, progress: Box::new(progress), draft_for: Some(model), reply })?;
        answer.recv().map_err(|_| EngineError::EngineStopped)?
    }

    pub fn unload(&self, model: ModelId) -> Result<()> {
        self.send(Command::Unload { model })
    }

    /// The prompt's token ids, as a generation would see them.
    pub fn tokenize(&self, model: ModelId, prompt: Prompt) -> Result<Vec<u32>> {
        self.tokenize_chat(model, prompt, ChatOptions::default())
    }

    /// The prompt's token ids with these tools and switches, as a generation would see them.
    pub fn tokenize_chat(&self, model: ModelId, prompt: Prompt, chat: ChatOptions) -> Result<Vec<u32>> {
        let (reply, answer) = mpsc::channel();
        self.send(Command::Tokenize { model, prompt, chat, reply })?;
        answer.recv().map_err(|_| EngineError::EngineStopped)?
    }

    /// The model's tokenizer and template, to count text-only prompts on another thread.
    pub fn token_counter(&self, model: ModelId) -> Result<TokenCounter> {
        let (reply, answer) = mpsc::channel();
        self.send(Command::Counter { model, reply })?;
        answer.recv().map_err(|_| EngineError::EngineStopped)?
    }

    /// One vector per text from an embedding model (`ModelInfo::embedding`), each text with
    /// `prompt` written before it; blocks until they are ready. Runs between decode steps of
    /// whatever else is generating.
    pub fn embed(&self, model: ModelId, texts: Vec<String>, prompt: EmbedPrompt) -> Result<Embeddings> {
        let (reply, answer) = mpsc::channel();
        self.send(Command::Embed { model, texts, prompt, reply })?;
        answer.recv().map_err(|_| EngineError::EngineStopped)?
    }

    /// Queues a request; its events arrive on the returned `Generation`.
    pub fn generate(&self, request: Request) -> Generation {
        self.generate_cancellable(request, Arc::new(AtomicBool::new(false)))
    }

    /// Like `generate`, with a cancel switch the caller made first: a Stop that arrives while
    /// the request is still queued is then not lost.
    pub fn generate_cancellable(&self, request: Request, cancel: Arc<AtomicBool>) -> Generation {
        let (events, receiver) = mpsc::channel();
        if let Err(e) = self.send(Command::Generate { request: Box::new(request), cancel: cancel.clone(), events: events.clone() }) {
            let _ = events.send(Event::Error(e));
        }
        Generation { events: receiver, cancel }
    }

    /// Stops the engine for a process about to exit, which drops nothing (an app's exit):
    /// running requests end where they are, every session is written to disk, and no work is
    /// left on MLX's streams to run while the process tears MLX down. Waits at most `wait`;
    /// whether it finished in time.
    pub fn shutdown(&self, wait: Duration) -> bool {
        let (done, finished) = mpsc::channel();
        self.send(Command::Shutdown { done }).is_ok() && finished.recv_timeout(wait).is_ok()
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.commands.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(options: EngineOptions, commands: Receiver<Command>) {
    let limit = options.mlx_cache_limit.unwrap_or((crate::device::physical_memory() / 4) as usize);
    let _ = mlx_rs::memory::set_cache_limit(limit);
    let mut models: HashMap<ModelId, ReadyModel> = HashMap::new();
    let mut prefix = PrefixCache::new(options.prefix);
    let mut encoders = EncoderCache::new(options.encoder);
    let limits = options.media_limits;
    let video_reader = options.video_reader;
    let mut next_id = 1u64;
    let mut scheduler = Scheduler::new(&options.batch, limit);
    let mut open = true;
    let mut shutdown = None;
    while shutdown.is_none() && (open || !scheduler.is_idle()) {
        // Idle: wait for a command. Busy: take whatever has arrived, then run an iteration.
        let mut arrived = vec![];
        if scheduler.is_idle() {
            match commands.recv_timeout(IDLE_PERSIST / 2) {
                Ok(command) => arrived.push(command),
                Err(mpsc::RecvTimeoutError::Timeout) => prefix.persist_idle(IDLE_PERSIST),
                Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
            }
        }
        while open {
            match commands.try_recv() {
                Ok(command) => arrived.push(command),
                Err(mpsc::TryRecvError::Empty) => break,
                // The engine was dropped: finish what is running, then stop.
                Err(mpsc::TryRecvError::Disconnected) => open = false,
            }
        }
        for command in arrived {
            if shutdown.is_some() {
                break;
            }
            match command {
                Command::Load { path, options, mut progress, draft_for, reply } => {
                    let before = mlx_rs::memory::active_memory().unwrap_or(0);
                    let target = match draft_for {
                        Some(id) => match models.get(&id) {
                            Some(target) => Some(target),
                            None => {
                                let _ = reply.send(Err(unknown_model()));
                                continue;
                            }
                        },
                        None => None,
                    };
                    let loaded = ReadyModel::load(&path, &options, &mut progress).and_then(|model| match target {
                        Some(target) => match generate::vocabulary_mismatch(&target.tokenizer, &model.tokenizer) {
                            Some(mismatch) => {
                                Err(EngineError::DraftVocabulary { draft: path.clone(), model: target.info.path.clone(), mismatch })
                            }
                            None => Ok(model),
                        },
                        None => Ok(model),
                    });
                    let result = loaded.map(|mut model| {
                        model.weights_bytes = mlx_rs::memory::active_memory().unwrap_or(0).saturating_sub(before);
                        model.info.weights_bytes = model.weights_bytes as u64;
                        if let Some(reader) = &video_reader {
                            model.video_reader = reader.clone();
                        }
                        let id = ModelId(next_id);
                        next_id += 1;
                        let info = model.info.clone();
                        models.insert(id, model);
                        (id, info)
                    });
                    let _ = reply.send(result);
                }
                Command::Unload { model } => {
                    if let Some(gone) = models.remove(&model) {
                        tracing::info!(path = %gone.info.path.display(), "unloaded");
                        prefix.release_model(&gone.info.fingerprint);
                        if let Some(encoder) = &gone.encoder {
                            encoders.release_tower(&encoder.identity());
                        }
                    }
                    let _ = mlx_rs::memory::clear_cache();
                }
                Command::Tokenize { model, prompt, chat, reply } => {
                    let result =
                        models.get(&model).ok_or_else(unknown_model).and_then(|m| generate::prompt_ids(m, &prompt, &chat, &limits));
                    let _ = reply.send(result);
                }
                Command::Counter { model, reply } => {
                    let _ = reply.send(models.get(&model).ok_or_else(unknown_model).map(ReadyModel::token_counter));
                }
                // Nothing after it runs: running requests end where they are, later commands
                // are answered as to a stopped engine.
                Command::Shutdown { done } => shutdown = Some(done),
                Command::Embed { model, texts, prompt, reply } => {
                    let result = models.get(&model).ok_or_else(unknown_model).and_then(|m| embed::embed(m, &texts, &prompt));
                    let _ = reply.send(result);
                }
                Command::Generate { request, cancel, events } => match models.get(&request.model) {
                    Some(model) if model.embedding.is_some() => drop(events.send(Event::Error(EngineError::invalid(
                        "model",
                        format!(
                            "{} is an embedding model: it gives vectors (embeddings), not replies. Load a chat model to chat.",
                            model.info.path.display()
                        ),
                    )))),
                    Some(model) => {
                        let shared = generate::Shared { prefix: &mut prefix, encoders: &mut encoders, limits: &limits };
                        scheduler.submit(model, &models, &shared, *request, cancel, events);
                    }
                    None => drop(events.send(Event::Error(unknown_model()))),
                },
            }
        }
        if shutdown.is_none() && !scheduler.is_idle() {
            let mut shared = generate::Shared { prefix: &mut prefix, encoders: &mut encoders, limits: &limits };
            scheduler.step(&models, &mut shared);
        }
    }
    // The engine was dropped or shut down: what is sent from now on is refused (a closed
    // channel); a clean shutdown keeps every session on disk, and leaves no work on MLX's
    // streams to run while the process exits.
    drop(commands);
    drop(scheduler);
    prefix.persist_all();
    crate::device::wait_for_streams();
    if let Some(done) = shutdown {
        let _ = done.send(());
    }
}

fn unknown_model() -> EngineError {
    EngineError::invalid("model", "that model is not loaded; load it first")
}
