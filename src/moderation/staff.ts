import { ObjectId, type Collection } from 'mongodb';
import { changed, type ChangePublisher } from '../changes/events.js';
import { AppError, notFound } from '../errors.js';
import type { UserDirectory } from '../graph/userDirectory.js';
import { existingUsers as live } from '../graph/userDirectory.js';
import { assertHandle, type UserDocument } from '../records/users.js';
import type { AuditLog } from './auditLog.js';

/** What the audit log names as the actor of the staff command. */
export const commandLine = 'command line';

/**
 * Who is staff: the handles STAFF_HANDLES names (a deployment's first staff, who need no database
 * write and cannot be revoked from inside), and the accounts the staff command granted (`staff`
 * on the user, held with the user in every process and announced when it changes).
 */
export class Staff {
  private readonly configured: ReadonlySet<string>;
  private readonly users: Collection<UserDocument>;

  constructor(
    handles: readonly string[],
    private readonly directory: Pick<UserDirectory, 'getUser' | 'forget' | 'users'>,
    private readonly audit: AuditLog,
    private readonly changes: ChangePublisher,
  ) {
    this.configured = new Set(handles);
    this.users = directory.users;
  }

  async isStaff(handle: string | null): Promise<boolean> {
    if (handle === null) return false;
    if (this.configured.has(handle)) return (await this.directory.getUser(handle)) !== null;
    return (await this.directory.getUser(handle))?.staff === true;
  }

  /** FORBIDDEN unless `handle` is staff. */
  async assertStaff(handle: string | null): Promise<string> {
    if (handle === null || !(await this.isStaff(handle))) throw new AppError('FORBIDDEN', 'Only staff may do this');
    return handle;
  }

  /** The staff command: makes an account staff (or not), recorded in the audit log. */
  async grant(handle: string, staff: boolean): Promise<void> {
    assertHandle(handle);
    const found = await this.users.findOneAndUpdate({ _id: handle, ...live }, staff ? { $set: { staff: true } } : { $unset: { staff: '' } }, { projection: { _id: 1 } });
    if (!found) throw notFound(`No user with handle "${handle}"`);
    await this.audit.record({ _id: `${staff ? 'grant' : 'revoke'}:${handle}:${new ObjectId().toHexString()}`, who: commandLine, what: staff ? 'GRANT_STAFF' : 'REVOKE_STAFF', account: handle });
    this.directory.forget([handle]);
    await this.changes.publish(changed({ users: [handle] }));
  }

  /** Staff by configuration, then granted ones, for the staff command. */
  async list(): Promise<{ configured: string[]; granted: string[] }> {
    const granted = await this.users.find({ staff: true, ...live }, { projection: { _id: 1 } }).toArray();
    return { configured: [...this.configured].sort(), granted: granted.map((user) => user._id).sort() };
  }
}
