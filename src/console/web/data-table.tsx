import type { ComponentChildren } from 'preact';

/** A column's heading, and `num` for a right-aligned column of figures. */
export type Column = string | { label: string; num?: boolean };

/**
 * The console's table: headings, one row per item (the caller renders the <tr>), a line saying there is nothing
 * once the rows have loaded empty (not while they load), in a box that scrolls sideways when the table is wider
 * than the window (cells never wrap: see style.css).
 */
export function DataTable<T>({
  testId,
  columns,
  rows,
  empty,
  row,
}: {
  testId: string;
  columns: Column[];
  /** undefined while loading. */
  rows: T[] | undefined;
  empty: string;
  row: (item: T) => ComponentChildren;
}) {
  return (
    <div class="scroll">
      <table data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column, i) =>
              typeof column === 'string' ? (
                <th key={i}>{column}</th>
              ) : (
                <th key={i} class={column.num ? 'num' : undefined}>
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
          {rows?.length === 0 && (
            <tr>
              <td colSpan={columns.length} class="muted">
                {empty}
              </td>
            </tr>
          )}
          {(rows ?? []).map(row)}
        </tbody>
      </table>
    </div>
  );
}
