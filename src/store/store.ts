import { openDatabase, type Db } from './database.js';
import { OrgRepository } from './orgs.js';
import { UserRepository } from './users.js';
import { SshKeyRepository } from './ssh-keys.js';
import { AppRepository } from './apps.js';
import { EnvVarRepository } from './env-vars.js';
import { DeploymentRepository } from './deployments.js';
import { AddonRepository } from './addons.js';
import { AddonBackupRepository } from './addon-backups.js';
import { LinkRepository } from './links.js';
import { PublishedConfigRepository } from './published-config.js';
import { AppUserRepository } from './app-users.js';
import { AppConfigRepository } from './app-config.js';
import { ApiTokenRepository } from './api-tokens.js';
import { DomainRepository } from './domains.js';
import { CertificateRepository } from './certificates.js';
import { AcmeStateRepository } from './acme-state.js';
import { DrainRepository } from './drains.js';
import { WebhookRepository } from './webhooks.js';
import { NotifyEmailRepository } from './notify-emails.js';
import { NotificationDeliveryRepository } from './notification-deliveries.js';
import { CronRunRepository } from './cron-runs.js';
import { OrgQuotaRepository } from './org-quotas.js';

/** The only place state lives. */
export class Store {
  readonly orgs: OrgRepository;
  readonly users: UserRepository;
  readonly sshKeys: SshKeyRepository;
  readonly apps: AppRepository;
  readonly env: EnvVarRepository;
  readonly deployments: DeploymentRepository;
  readonly addons: AddonRepository;
  readonly addonBackups: AddonBackupRepository;
  readonly links: LinkRepository;
  readonly publishedConfig: PublishedConfigRepository;
  readonly appUsers: AppUserRepository;
  readonly appConfig: AppConfigRepository;
  readonly tokens: ApiTokenRepository;
  readonly domains: DomainRepository;
  readonly certificates: CertificateRepository;
  readonly acme: AcmeStateRepository;
  readonly drains: DrainRepository;
  readonly webhooks: WebhookRepository;
  readonly notifyEmails: NotifyEmailRepository;
  readonly notificationDeliveries: NotificationDeliveryRepository;
  readonly cron: CronRunRepository;
  readonly orgQuotas: OrgQuotaRepository;

  constructor(readonly db: Db) {
    this.orgs = new OrgRepository(db);
    this.users = new UserRepository(db);
    this.sshKeys = new SshKeyRepository(db);
    this.apps = new AppRepository(db);
    this.env = new EnvVarRepository(db);
    this.deployments = new DeploymentRepository(db);
    this.addons = new AddonRepository(db);
    this.addonBackups = new AddonBackupRepository(db);
    this.links = new LinkRepository(db);
    this.publishedConfig = new PublishedConfigRepository(db);
    this.appUsers = new AppUserRepository(db);
    this.appConfig = new AppConfigRepository(db);
    this.tokens = new ApiTokenRepository(db);
    this.domains = new DomainRepository(db);
    this.certificates = new CertificateRepository(db);
    this.acme = new AcmeStateRepository(db);
    this.drains = new DrainRepository(db);
    this.webhooks = new WebhookRepository(db);
    this.notifyEmails = new NotifyEmailRepository(db);
    this.notificationDeliveries = new NotificationDeliveryRepository(db);
    this.cron = new CronRunRepository(db);
    this.orgQuotas = new OrgQuotaRepository(db);
  }

  static open(path: string): Store {
    return new Store(openDatabase(path));
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  close(): void {
    this.db.close();
  }
}
