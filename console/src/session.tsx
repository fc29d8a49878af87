import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { api, setCsrfToken, setUnauthorizedHandler } from './api/client';
import type { Role, Session } from './api/types';
import { ROLES } from './options';

type State =
  | { status: 'loading' }
  | { status: 'signed-out'; expired: boolean }
  | { status: 'signed-in'; session: Session };

interface SessionApi {
  state: State;
  /** Keeps the session the login answered. */
  signedIn: (session: Session) => void;
  signOut: () => Promise<void>;
  signOutEverywhere: () => Promise<number>;
}

const SessionContext = createContext<SessionApi | null>(null);

/**
 * Whether `role` may do what `needed` may: the server's roles come in order, each allowed what
 * the ones before it are (the server decides; this only hides buttons).
 */
export function roleAllows(role: Role | undefined, needed: Role): boolean {
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<State>({ status: 'loading' });

  const signedIn = useCallback((session: Session) => {
    setCsrfToken(session.csrf_token);
    setState({ status: 'signed-in', session });
  }, []);

  const signedOut = useCallback((expired: boolean) => {
    setCsrfToken(null);
    setState({ status: 'signed-out', expired });
  }, []);

  useEffect(() => {
    setUnauthorizedHandler(() => signedOut(true));
    const controller = new AbortController();
    api
      .get<Session>('/session', undefined, controller.signal)
      .then(signedIn)
      .catch((err: unknown) => {
        if (err instanceof DOMException && err.name === 'AbortError') return;
        signedOut(false);
      });
    return () => {
      controller.abort();
      setUnauthorizedHandler(null);
    };
  }, [signedIn, signedOut]);

  const value = useMemo<SessionApi>(
    () => ({
      state,
      signedIn,
      signOut: async () => {
        try {
          await api.delete('/session');
        } finally {
          signedOut(false);
        }
      },
      signOutEverywhere: async () => {
        const answer = await api.post<{ sessions_ended: number }>('/session/sign-out-everywhere');
        signedOut(false);
        return answer.sessions_ended;
      },
    }),
    [state, signedIn, signedOut],
  );

  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionApi {
  const ctx = useContext(SessionContext);
  if (!ctx) throw new Error('useSession outside SessionProvider');
  return ctx;
}

/** The signed-in operator's role (undefined while signed out). */
export function useRole(): Role | undefined {
  const { state } = useSession();
  return state.status === 'signed-in' ? state.session.operator.role : undefined;
}

/** Whether the signed-in operator's role reaches `needed`. */
export function useCan(needed: Role): boolean {
  return roleAllows(useRole(), needed);
}
