/**
 * POST /api/v1/delete: removes the rows of one measurement matching a `where` condition, from its
 * files and its buffered rows, through the shared row remover (see ../rewrite/row-remover.ts).
 */
import type { ConnectionPool } from '../../duckdb/index.ts';
import { forbidden, invalid } from '../../lib/errors.ts';
import { assertDatabaseName, assertMeasurementName } from '../../lib/names.ts';
import type { TableAccess } from '../../lib/table-access.ts';
import type { RemovalResult, RowRemover } from '../rewrite/row-remover.ts';
import { parseWhere } from './where-condition.ts';

/** The `delete` settings. */
export interface DeleteSettings {
  enabled: boolean;
  max_rows_per_delete: number;
}

/** A delete request as the route received it. */
export interface DeleteRequest {
  database: string;
  measurement: string;
  where: string;
  confirm: boolean;
}

/** A finished delete: the removal counts plus the time it took. */
export type DeleteResult = RemovalResult & { execution_time_ms: number };

/**
 * Row deletes, gated by `delete.enabled` and `confirm`. The switch guards users' deletes of their
 * data; a service erasing from the system database it keeps (a memory purge: a person's right to
 * erasure) does its own duty and passes regardless.
 */
export class DeleteService {
  constructor(private readonly deps: { remover: RowRemover; pool: ConnectionPool; settings: DeleteSettings }) {}

  /** The settings GET /api/v1/delete/config shows. */
  config(): DeleteSettings & { confirm_required: true } {
    return { ...this.deps.settings, confirm_required: true };
  }

  /**
   * Deletes matching rows: 403 when disabled (unless `access` owns the system database), 400 without
   * confirm or for a bad condition or too many rows. The caller has checked that `access` may delete them.
   */
  async delete(req: DeleteRequest, access: TableAccess): Promise<DeleteResult> {
    const started = performance.now();
    if (!this.deps.settings.enabled && !access.ownsSystemDatabase(req.database)) throw forbidden('deleting is disabled: set delete.enabled=true');
    if (req.confirm !== true) throw invalid('confirmation required: send "confirm": true');
    assertDatabaseName(req.database);
    assertMeasurementName(req.measurement);
    const where = await this.deps.pool.use((conn) => parseWhere(conn, req.where));
    const result = await this.deps.remover.remove({
      database: req.database,
      measurement: req.measurement,
      condition: where.sql,
      columns: where.columns,
      minTime: where.minTime,
      maxTime: where.maxTime,
      maxRows: this.deps.settings.max_rows_per_delete,
      maxRowsSetting: 'delete.max_rows_per_delete',
    });
    return { ...result, execution_time_ms: Math.round(performance.now() - started) };
  }
}
