import { TeamSwitch } from './team-switch';

/** Whether the team lets its members keep team tokens of their own (the team's `selfServiceTokens`). */
export function SelfServiceTokens(props: {
  team: string;
  on: boolean;
  canChange: boolean;
  onSaved: () => void;
}) {
  return (
    <TeamSwitch
      {...props}
      field="selfServiceTokens"
      testId="self-service"
      wording={{
        on: 'Members may issue, rotate and revoke team tokens of their own (on their My tokens page).',
        off: 'Members may not keep team tokens of their own.',
        turnOff: 'Stop member tokens',
        turnOn: 'Allow member tokens',
      }}
    />
  );
}
