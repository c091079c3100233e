import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { mayAnywhere, useRoles } from './access';
import { api, ApiError, useSession, type Session } from './api';
import { AuditPage } from './pages/audit';
import { McpPage } from './pages/mcp';
import { ModelsPage } from './pages/models';
import { MyTokensPage } from './pages/my-tokens';
import { OverviewPage } from './pages/overview';
import { RequestPage } from './pages/request';
import { RequestsPage } from './pages/requests';
import { SignInPage } from './pages/sign-in';
import { TeamPage } from './pages/team';
import { TeamsPage } from './pages/teams';
import './style.css';

/**
 * The page the hash names: #/, #/teams, #/teams/<id>, #/requests, #/requests/<id>, #/models, #/mcp, #/audit, #/me
 * (a person's own tokens).
 */
function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const route = useRoute();
  useEffect(() => {
    api<Session>('GET', '/console/api/session').then(
      (s) => signedIn(s),
      () => setSession(null),
    );
  }, []);
  const signedIn = (s: Session | null) => {
    useSession(s);
    useRoles(s?.roles ?? []);
    setSession(s);
  };
  if (session === undefined) return <p class="loading">Loading…</p>;
  if (!session) return <SignInPage onSignedIn={signedIn} />;

  const signOut = async () => {
    await api('DELETE', '/console/api/session').catch((e: ApiError) => e);
    signedIn(null);
  };
  const [section, id] = route;
  const page =
    section === 'teams' && id ? (
      <TeamPage team={id} />
    ) : section === 'teams' ? (
      <TeamsPage />
    ) : section === 'requests' && id ? (
      <RequestPage id={id} />
    ) : section === 'requests' ? (
      <RequestsPage />
    ) : section === 'models' ? (
      <ModelsPage />
    ) : section === 'mcp' ? (
      <McpPage />
    ) : section === 'audit' ? (
      <AuditPage />
    ) : section === 'me' && session.person ? (
      <MyTokensPage />
    ) : (
      <OverviewPage />
    );
  const link = (href: string, label: string, active: boolean) => (
    <a href={href} class={active ? 'active' : ''}>
      {label}
    </a>
  );
  return (
    <>
      <header>
        <strong>Switchyard</strong>
        <nav>
          {link('#/', 'Overview', !section)}
          {link('#/teams', 'Teams', section === 'teams')}
          {mayAnywhere('requests:read') && link('#/requests', 'Requests', section === 'requests')}
          {mayAnywhere('deployments:read') && link('#/models', 'Models', section === 'models')}
          {mayAnywhere('deployments:read') && link('#/mcp', 'MCP', section === 'mcp')}
          {mayAnywhere('audit:read') && link('#/audit', 'Audit trail', section === 'audit')}
          {session.person && link('#/me', 'My tokens', section === 'me')}
        </nav>
        <span class="who">
          <span class="person" title={session.person?.subject}>
            {session.person?.name ?? session.actor}
            {session.person?.email && session.person.name ? ` (${session.person.email})` : ''}
          </span>{' '}
          <span class="roles">{session.roles.join(', ')}</span>{' '}
          <button type="button" onClick={signOut}>
            Sign out
          </button>
        </span>
      </header>
      <main>{page}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
