// This thread's link to one runtime generation: a dedicated BroadcastChannel pair (this thread ↔ runtime).
// BroadcastChannel is the one primitive that reaches the runtime from any thread (a MessagePort to it can
// only be handed out by the main thread, which worker threads cannot ask for without owning parentPort).
// The link carries calls (with ids) and their replies, and the outputs of this thread's requests.
import { BroadcastChannel, isMainThread, threadId } from "node:worker_threads";
import { ClientClosedError, deserializeError } from "@vllm-engine-core/errors";
import { createFrameRing } from "../frame-ring.js";
import {
  type CallBody,
  type CallMessage,
  type CallName,
  type CallReply,
  type CallResult,
  controlChannelName,
  type Hello,
  type LinkMessage,
  linkChannelName,
  type RuntimeFate,
  receive,
  retiringError,
  type ToHost,
  type ToRuntime,
} from "../messages.js";
import { WELCOME_TIMEOUT_MS } from "../timing.js";
import { newId } from "./ids.js";
import { LinkInbox } from "./link-inbox.js";
import { locateRuntime, onRuntimeEnded } from "./rendezvous.js";
import { threadHeartbeat } from "./sentinel.js";

/** What a link delivers to the thread-local state of one connection. */
export interface LinkedConnection {
  onMessage(message: Extract<ToHost, { c: string }>): void;
  /** The runtime is gone (crashed or retired): fail everything. */
  onRuntimeEnded(error: Error): void;
}

interface PendingCall<K extends CallName> {
  resolve: (value: CallResult<K>) => void;
  reject: (error: Error) => void;
}

/** Pending calls by tag, then id: a reply names both, so its value meets its call's type with no cast. */
type PendingCalls = { [K in CallName]: Map<number, PendingCall<K>> };

const threadKey = `${threadId}-${newId().slice(0, 8)}`;

export class RuntimeLink {
  readonly gen: string;
  private readonly channel: BroadcastChannel;
  /** The frame ring this thread's engine steps arrive in, and the merge of it with the channel. */
  private readonly ring = createFrameRing();
  private readonly ringId = newId();
  private readonly inbox: LinkInbox;
  private nextId = 1;
  private readonly pending: PendingCalls = {
    connect: new Map(),
    attach: new Map(),
    submit: new Map(),
    abort: new Map(),
    utility: new Map(),
    diagnostics: new Map(),
    detach: new Map(),
    shutdown: new Map(),
  };
  private readonly connections = new Map<string, LinkedConnection>();
  private holds = 0;
  private endedWith: Error | undefined;
  private onWelcome: (() => void) | undefined;

  private constructor(gen: string) {
    this.gen = gen;
    this.channel = new BroadcastChannel(linkChannelName(gen, threadKey));
    this.inbox = new LinkInbox(this.ring, (frames) =>
      this.connections.get(frames.c)?.onMessage({ t: "frames", ...frames }),
    );
    receive<LinkMessage>(this.channel, (message) =>
      this.inbox.onLinkMessage(message.r, () => this.onMessage(message)),
    );
    this.channel.unref();
  }

  /** Open the link: create this end, say hello on the runtime's control channel, wait for the welcome. */
  static async open(gen: string): Promise<RuntimeLink> {
    const heartbeat = isMainThread ? null : await threadHeartbeat();
    const link = new RuntimeLink(gen);
    const release = link.hold();
    try {
      for (;;) {
        const welcomed = new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), WELCOME_TIMEOUT_MS);
          link.onWelcome = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        const hello: Hello = {
          t: "hello",
          link: linkChannelName(gen, threadKey),
          threadKey,
          heartbeat,
          ring: link.ring,
          ringId: link.ringId,
        };
        const control = new BroadcastChannel(controlChannelName(gen));
        control.postMessage(hello);
        control.close();
        if (await welcomed) return link;
        // No welcome yet: a busy runtime keeps us waiting, a retired or crashed one fails the open.
        const where = await locateRuntime(gen);
        if (!where.alive)
          throw where.fate.kind === "retired" ? retiringError() : deserializeError(where.fate.error);
      }
    } catch (error) {
      link.close();
      throw error;
    } finally {
      link.onWelcome = undefined;
      release();
    }
  }

  get ended(): Error | undefined {
    return this.endedWith;
  }

  /** Keep this thread alive (pending call, live request); returns the release function. */
  hold(): () => void {
    if (this.holds++ === 0) this.channel.ref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0) this.channel.unref();
    };
  }

  /** Generic in the call so that a call message (`call`) is checked against its own tag's body. */
  post<K extends CallName>(message: ToRuntime | CallMessage<K>): void {
    if (this.endedWith === undefined) this.channel.postMessage(message);
  }

  /** Send a call; `id` lets the caller cancel it. The reply is typed by the call's tag (CallMap). */
  call<K extends CallName>(body: CallBody<K>): { id: number; result: Promise<CallResult<K>> } {
    const id = this.nextId++;
    if (this.endedWith !== undefined) return { id, result: Promise.reject(this.endedWith) };
    const release = this.hold();
    const calls = this.pending[body.t];
    const result = new Promise<CallResult<K>>((resolve, reject) => {
      calls.set(id, { resolve, reject });
    }).finally(release);
    try {
      this.post({ ...body, id });
    } catch (error) {
      // Nothing was sent (e.g. a DataCloneError for an argument that cannot cross threads): forget the
      // call, or it would keep this thread alive and reject unobserved when the runtime ends.
      calls.delete(id);
      release();
      throw error;
    }
    return { id, result };
  }

  register(connectionId: string, connection: LinkedConnection): void {
    this.connections.set(connectionId, connection);
  }

  unregister(connectionId: string, connection: LinkedConnection): void {
    if (this.connections.get(connectionId) === connection) this.connections.delete(connectionId);
  }

  /** The runtime generation ended: fail pending calls and every connection on this link. */
  end(fate: RuntimeFate): void {
    if (fate.kind === "crashed") {
      const error = deserializeError(fate.error);
      this.shut(error, error);
      return;
    }
    // A retired runtime had no connection left; calls that raced with its retirement are retried elsewhere.
    this.shut(
      retiringError(),
      new ClientClosedError({ detail: "the runtime that owned this connection retired" }),
    );
  }

  /** The runtime stopped hearing this thread's sentinel and released everything it owned. */
  private evict(): void {
    const error = new ClientClosedError({
      detail:
        "the runtime did not hear this thread's liveness sentinel for too long and released its requests; " +
        "attach again to keep using the connection",
    });
    this.shut(error, error);
  }

  private shut(callError: Error, connectionError: Error): void {
    if (this.endedWith !== undefined) return;
    this.endedWith = callError;
    // In the order the calls were made (ids grow), whatever their tag.
    const rejects: [id: number, reject: (error: Error) => void][] = [];
    for (const calls of Object.values(this.pending)) {
      for (const [id, call] of calls) rejects.push([id, call.reject]);
      calls.clear();
    }
    rejects.sort(([a], [b]) => a - b);
    for (const [, reject] of rejects) reject(callError);
    for (const connection of [...this.connections.values()]) connection.onRuntimeEnded(connectionError);
    this.connections.clear();
    this.close();
  }

  private close(): void {
    this.inbox.close();
    this.channel.close();
    if (links.get(this.gen)?.link === this) links.delete(this.gen);
  }

  private onMessage(message: ToHost): void {
    switch (message.t) {
      case "welcome":
        this.onWelcome?.();
        return;
      case "evicted":
        this.evict();
        return;
      case "ok":
      case "err":
        this.settle(message);
        return;
      default:
        this.connections.get(message.c)?.onMessage(message);
    }
  }

  /** Generic in the call, so the reply's value must be what call `K` resolves with. */
  private settle<K extends CallName>(reply: CallReply<K>): void {
    const calls = this.pending[reply.call];
    const call = calls.get(reply.id);
    calls.delete(reply.id);
    if (reply.t === "ok") call?.resolve(reply.value);
    else call?.reject(deserializeError(reply.error));
  }
}

// ---------------------------------------------------------------------------------------------------
// This thread's links, one per runtime generation.

const links = new Map<string, { link?: RuntimeLink; opening: Promise<RuntimeLink> }>();
let watching = false;

export function linkTo(gen: string): Promise<RuntimeLink> {
  watchRuntimes();
  const existing = links.get(gen);
  if (existing !== undefined) return existing.opening;
  const entry: { link?: RuntimeLink; opening: Promise<RuntimeLink> } = {
    opening: RuntimeLink.open(gen).then(
      (link) => {
        entry.link = link;
        return link;
      },
      (error: unknown) => {
        if (links.get(gen) === entry) links.delete(gen);
        throw error;
      },
    ),
  };
  links.set(gen, entry);
  return entry.opening;
}

function watchRuntimes(): void {
  if (watching) return;
  watching = true;
  onRuntimeEnded((gen, fate) => links.get(gen)?.link?.end(fate));
  if (!isMainThread) {
    // Fast path for a worker thread that ends normally: tell the runtimes right away instead of
    // letting them wait for the sentinel to go stale. terminate() skips this; the sentinel covers it.
    process.on("exit", () => {
      for (const entry of links.values()) entry.link?.post({ t: "bye" });
    });
  }
}
