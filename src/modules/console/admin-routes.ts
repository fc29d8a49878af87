import type { Request, Response, Router } from 'express';
import Joi from 'joi';
import { sendData } from '../../platform/http/envelope';
import { parseJsonBody } from '../../platform/http/body';
import { pathValue, validate } from '../../platform/http/validation';
import { apiRouter } from '../../platform/http/router';
import {
  auditView,
  OPERATOR_ROLES,
  operatorView,
  type OperatorService,
  type OperatorRole,
} from '../operators';
import { refusalsAudited, requireRole } from './guard';
import { actorOf, currentSession } from './session-check';
import { keysetPageOf } from '../../platform/pagination';
import { listOf, pageOf } from '../../platform/http/keyset';
import { paging } from './schemas';

const role = Joi.string().valid(...OPERATOR_ROLES);
export const createOperatorBody = Joi.object({
  username: Joi.string().min(1).max(64).required(),
  role: role.required(),
  password: Joi.string().min(1).max(256),
});
export const roleBody = Joi.object({ role: role.required() });
const emptyBody = Joi.object({}).allow(null);
export const resetPasswordBody = Joi.object({ password: Joi.string().min(1).max(256) }).allow(null);
const isoInstant = Joi.string().isoDate();
export const auditQuery = Joi.object({
  operator: Joi.string().max(96),
  action: Joi.string().max(64),
  target_type: Joi.string().max(32),
  target_id: Joi.string().max(128),
  from: isoInstant,
  to: isoInstant,
  ...paging,
});

/** Operators and the audit log: admins only (SPEC §12). Mounted at /console/api behind the session check. */
export function adminRoutes(operators: OperatorService): Router {
  const router = apiRouter();
  const admin = requireRole('admin');
  const actor = (req: Request, res: Response) => actorOf(req, res, currentSession(res));

  router.get('/operators', admin, async (req, res) => {
    const q = validate(Joi.object(paging), req.query) as { limit?: string; after?: string };
    sendData(res, listOf(await operators.page(pageOf(q)), operatorView));
  });

  router.post('/operators', admin, parseJsonBody(), async (req, res) => {
    const made = await change(
      res,
      'operator.create',
      String((req.body as { username?: unknown })?.username ?? '').slice(0, 64),
      () => {
        const body = validate(createOperatorBody, req.body ?? null) as {
          username: string;
          role: OperatorRole;
          password?: string;
        };
        return operators.create(actor(req, res), body);
      },
    );
    sendData(res, {
      operator: operatorView(made.operator),
      ...(made.generated ? { password: made.password } : {}),
    });
  });

  const who = (params: Record<string, unknown>) => pathValue(params, 'operatorId', 'operator_id');
  /**
   * Runs a change to an operator; the service audits it when done, and a refusal (a bad body,
   * an unknown operator, the last admin) is audited here with the code the admin was answered.
   */
  const change = <T>(res: Response, action: string, targetId: string, work: () => Promise<T>): Promise<T> =>
    refusalsAudited(res, work, async () => ({ action, targetType: 'operator', targetId }));

  router.post('/operators/:operatorId/role', admin, parseJsonBody(), async (req, res) => {
    const target = who(req.params);
    const after = await change(res, 'operator.set_role', target, () => {
      const body = validate(roleBody, req.body ?? null) as { role: OperatorRole };
      return operators.setRole(actor(req, res), target, body.role);
    });
    sendData(res, { operator: operatorView(after) });
  });
  router.post('/operators/:operatorId/disable', admin, parseJsonBody(), async (req, res) => {
    const target = who(req.params);
    const after = await change(res, 'operator.disable', target, () => {
      validate(emptyBody, req.body ?? null);
      return operators.disable(actor(req, res), target);
    });
    sendData(res, { operator: operatorView(after) });
  });
  router.post('/operators/:operatorId/enable', admin, parseJsonBody(), async (req, res) => {
    const target = who(req.params);
    const after = await change(res, 'operator.enable', target, () => {
      validate(emptyBody, req.body ?? null);
      return operators.enable(actor(req, res), target);
    });
    sendData(res, { operator: operatorView(after) });
  });
  router.post('/operators/:operatorId/reset-password', admin, parseJsonBody(), async (req, res) => {
    const target = who(req.params);
    const done = await change(res, 'operator.reset_password', target, () => {
      const body = (validate(resetPasswordBody, req.body ?? null) ?? {}) as { password?: string };
      return operators.resetPassword(actor(req, res), target, body.password);
    });
    sendData(res, {
      operator: operatorView(done.operator),
      ...(done.generated ? { password: done.password } : {}),
    });
  });

  router.get('/audit', admin, async (req, res) => {
    const q = validate(auditQuery, req.query) as Record<string, string | undefined>;
    // The audit log is read by its serial id (the order rows were appended in); the cursor's
    // key is the id of a page's last entry.
    const page = pageOf({ limit: q.limit, after: q.after }, /^\d{1,19}$/);
    const rows = await operators.auditLog(
      {
        operator: q.operator,
        action: q.action,
        targetType: q.target_type,
        targetId: q.target_id,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to) : undefined,
      },
      page.limit + 1,
      page.after?.key,
    );
    sendData(
      res,
      listOf(
        keysetPageOf(rows, page.limit, (r) => ({ at: r.atKey, key: r.id })),
        auditView,
      ),
    );
  });

  return router;
}
