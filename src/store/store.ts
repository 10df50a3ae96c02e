import { openDatabase, type Db } from './database.js';
import { OrgRepository } from './orgs.js';
import { UserRepository } from './users.js';
import { SshKeyRepository } from './ssh-keys.js';
import { AppRepository } from './apps.js';
import { EnvVarRepository } from './env-vars.js';
import { DeploymentRepository } from './deployments.js';
import { AddonRepository } from './addons.js';
import { AddonBackupRepository } from './addon-backups.js';
import { BackupObjectSumRepository } from './backup-object-sums.js';
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
import { ScalingDecisionRepository } from './scaling-decisions.js';
import type { SecretBox } from './secret-box.js';
import { StoreSecrets } from './store-secrets.js';

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
  readonly backupObjectSums: BackupObjectSumRepository;
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
  readonly scalingDecisions: ScalingDecisionRepository;
  /** The key secrets are sealed with (secret-box.ts); replaced by a rotation. */
  readonly secrets: StoreSecrets;

  /** Without a key (unit tests, the restore's bookkeeping), secrets stay in clear and sealed ones are refused. */
  constructor(
    readonly db: Db,
    box?: SecretBox,
  ) {
    this.secrets = new StoreSecrets(box);
    this.orgs = new OrgRepository(db);
    this.users = new UserRepository(db);
    this.sshKeys = new SshKeyRepository(db);
    this.apps = new AppRepository(db);
    this.env = new EnvVarRepository(db, this.secrets);
    this.deployments = new DeploymentRepository(db);
    this.addons = new AddonRepository(db, this.secrets);
    this.addonBackups = new AddonBackupRepository(db);
    this.backupObjectSums = new BackupObjectSumRepository(db);
    this.links = new LinkRepository(db);
    this.publishedConfig = new PublishedConfigRepository(db, this.secrets);
    this.appUsers = new AppUserRepository(db);
    this.appConfig = new AppConfigRepository(db);
    this.tokens = new ApiTokenRepository(db);
    this.domains = new DomainRepository(db);
    this.certificates = new CertificateRepository(db);
    this.acme = new AcmeStateRepository(db);
    this.drains = new DrainRepository(db, this.secrets);
    this.webhooks = new WebhookRepository(db, this.secrets);
    this.notifyEmails = new NotifyEmailRepository(db);
    this.notificationDeliveries = new NotificationDeliveryRepository(db);
    this.cron = new CronRunRepository(db);
    this.orgQuotas = new OrgQuotaRepository(db);
    this.scalingDecisions = new ScalingDecisionRepository(db);
  }

  static open(path: string, box?: SecretBox): Store {
    return new Store(openDatabase(path), box);
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  close(): void {
    this.db.close();
  }
}
