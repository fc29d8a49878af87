import type { App as ClientApp } from '../api/types';
import { seg } from '../api/client';
import { ActionButton } from '../components/actions';
import { ListTable, PageHeader, StatusBadge } from '../components/common';
import { cellText, localTime } from '../format';
import { useListPage } from '../hooks';
import { useCan } from '../session';

const isDisabled = (a: ClientApp) => a.status === 'disabled';

export function AppsPage() {
  const list = useListPage<ClientApp>('/apps');
  const isAdmin = useCan('admin');
  return (
    <>
      <PageHeader title="Apps" />
      <ListTable<ClientApp>
        list={list}
        name="apps"
        caption="Apps"
        rowKey={(a) => a.app_id}
        columns={[
          { title: 'App id', dataIndex: 'app_id' },
          { title: 'Name', key: 'name', render: (_: unknown, a) => cellText(a.name) },
          {
            title: 'Status',
            key: 'status',
            render: (_: unknown, a) => <StatusBadge status={a.status} />,
          },
          {
            title: 'Scopes',
            dataIndex: 'scopes',
            render: (v: unknown) => (Array.isArray(v) ? v.join(', ') : cellText(v)),
          },
          { title: 'Created', dataIndex: 'created_at', render: localTime },
          ...(isAdmin
            ? [
                {
                  title: 'Actions',
                  key: 'actions',
                  render: (_: unknown, a: ClientApp) =>
                    isDisabled(a) ? null : (
                      <ActionButton
                        path={`/apps/${seg(a.app_id)}/disable`}
                        label="Disable"
                        confirm={`Disable app ${a.app_id}? Its requests are refused from now on.`}
                        done={`App ${a.app_id} disabled`}
                        onDone={list.reload}
                        testId={`disable-app-${a.app_id}`}
                        danger
                      />
                    ),
                },
              ]
            : []),
        ]}
      />
    </>
  );
}
