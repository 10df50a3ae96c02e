import type { AppRow } from '../store/apps.js';
import type { Deployment } from '../store/deployments.js';
import type { AppliedDecision } from '../autoscaling/autoscaler.js';

/**
 * What happens in an app's life that several rooms react to. The room that notices it tells the
 * hub once; each stage of the daemon's start subscribes the room it built (the metrics count a
 * replaced instance and a finished deployment, the notifications tell people, the traffic
 * records forget a deleted app),
 * so no room calls the others one by one and a new reaction is one subscription in its stage.
 */
export interface LifecycleEvents {
  /**
   * An app's deletion began (app-deletion.ts tells the steps in order): each room ends what runs
   * of the app and starts nothing more of it (its drains send nothing more, its instances, cron
   * runs and one-off commands end), so that its user can go. A room that fails keeps the app.
   */
  'app ending': { appId: string };
  /** The deletion stopped and the app stays: each room ended in "app ending" takes it up again. */
  'app kept': { appId: string };
  /**
   * The app's user is gone: each room removes what it keeps of the app (its folders and
   * filesystem, its repository, the logs of the app and of `deploymentIds`), its record still there.
   */
  'app removing': { appId: string; deploymentIds: string[] };
  /** An app was deleted: its instances, record, folders and user are gone. */
  'app deleted': { appId: string };
  /** A deployment of the app started (a liveness replacement too: its cause says so). */
  'deployment started': { app: AppRow; deployment: Deployment };
  /** A deployment reached a final state (OK, FAIL, CANCELLED), as the store recorded it. */
  'deployment finished': { deployment: Deployment };
  /** An instance of the app crashed and was restarted. */
  'instance restarted': { appId: string };
  /** An instance of the app stopped answering its liveness checks and was replaced. */
  'instance replaced': { appId: string };
  /** The autoscaler changed the app's instance count (or tried: `outcome`). */
  'app scaled': { decision: AppliedDecision };
}

export type LifecycleEvent = keyof LifecycleEvents;
type Subscriber<E extends LifecycleEvent> = (event: LifecycleEvents[E]) => void | Promise<void>;

export class Lifecycle {
  private readonly subscribers = new Map<LifecycleEvent, Array<Subscriber<never>>>();

  constructor(private readonly log: (line: string) => void) {}

  /** Subscribers are told in the order they subscribed: the order of the stages that built them. */
  on<E extends LifecycleEvent>(event: E, subscriber: Subscriber<E>): void {
    const list = this.subscribers.get(event) ?? [];
    list.push(subscriber as Subscriber<never>);
    this.subscribers.set(event, list);
  }

  /**
   * Tells every subscriber, each awaited in turn; one that fails does not keep the others from
   * being told, and the first failure is thrown once all were.
   */
  async tell<E extends LifecycleEvent>(event: E, details: LifecycleEvents[E]): Promise<void> {
    let failure: { error: unknown } | undefined;
    for (const subscriber of this.subscribers.get(event) ?? []) {
      try {
        await (subscriber as Subscriber<E>)(details);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** Tells without waiting, for a room that must not be held up: a failure is logged. */
  publish<E extends LifecycleEvent>(event: E, details: LifecycleEvents[E]): void {
    this.tell(event, details).catch((error: Error) => this.log(`While telling "${event}": ${error.message}`));
  }
}
