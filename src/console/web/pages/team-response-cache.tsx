import { TeamSwitch } from './team-switch';

/** Whether a team's requests use the response cache of models that have one (docs/response-cache.md). */
export function TeamResponseCache(props: {
  team: string;
  on: boolean;
  canChange: boolean;
  onSaved: () => void;
}) {
  return (
    <TeamSwitch
      {...props}
      field="responseCache"
      testId="team-response-cache"
      wording={{
        on: 'Models with a response cache answer repeated requests of this team from it.',
        off: 'This team never uses the response cache.',
        turnOff: 'Opt out of the response cache',
        turnOn: 'Use the response cache',
      }}
    />
  );
}
