import { Card, Col, Empty, Row as Grid, Skeleton, Statistic, Table, Typography } from 'antd';
import { Link } from 'react-router';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import type { Overview, Row } from '../api/types';
import { ErrorAlert, PageHeader } from '../components/common';
import { humanize, yuan } from '../format';
import { useApiData } from '../hooks';

/** What the charts and cards show of each day's figures, and how. */
const COUNTS = ['orders', 'paid_orders', 'refunds'];
const AMOUNTS = ['paid_amount', 'refunded_amount'];
const isRatio = (key: string) => key === 'conversion';
const percent = (v: number) => `${(v * 100).toFixed(1)} %`;

const isAmount = (key: string) => /amount|fen|sum/i.test(key);
const SERIES_COLORS = ['#0b57d0', '#1e7d32', '#b06000', '#8e24aa', '#c5221f', '#00796b'];

/** Numbers of an object, one level of nesting flattened: `{orders: {paid: 3}}` → `orders paid`. */
function numbersOf(row: Row | undefined, prefix = ''): [string, number][] {
  if (!row) return [];
  const out: [string, number][] = [];
  for (const [key, value] of Object.entries(row)) {
    const name = prefix ? `${prefix}_${key}` : key;
    if (typeof value === 'number') out.push([name, value]);
    else if (value && typeof value === 'object' && !Array.isArray(value) && !prefix)
      out.push(...numbersOf(value as Row, key));
  }
  return out;
}

/** A chart's points: a day and its numbers, amounts in yuan; the known figures, or every other number. */
function dayPoints(days: Overview['days'], keys: string[]) {
  return days.map((d) => {
    const point: Record<string, string | number> = { day: d.date };
    const numbers = numbersOf(d);
    const known = numbers.filter(([k]) => keys.includes(k));
    for (const [key, value] of known.length > 0 ? known : numbers.filter(([k]) => !isRatio(k)))
      point[key] = isAmount(key) ? value / 100 : value;
    return point;
  });
}

function seriesOf(points: Record<string, string | number>[]): string[] {
  const keys = new Set<string>();
  for (const p of points) for (const k of Object.keys(p)) if (k !== 'day') keys.add(k);
  return [...keys];
}

type ExceptionKind = Overview['exceptions'][number]['kind'];

/** Where each kind of exception is worked through. */
const EXCEPTION_LINKS: Record<ExceptionKind, { label: string; to: string }> = {
  needs_refund_review: { label: 'Orders needing refund review', to: '/orders?needs_refund_review=true' },
  abnormal_refunds: { label: 'Abnormal refunds', to: '/refunds?status=abnormal' },
  failed_notifications: { label: 'Failed notifications', to: '/notifications?status=failed' },
  rejected_applications: { label: 'Rejected applications', to: '/merchants?status=rejected' },
  open_mismatches: { label: 'Open reconciliation mismatches', to: '/reconciliation' },
  overdue_complaints: { label: 'Overdue complaints', to: '/complaints?overdue=true' },
};

function Chart({
  title,
  points,
  kind,
  unit,
}: {
  title: string;
  points: Record<string, string | number>[];
  kind: 'line' | 'bar';
  unit?: string;
}) {
  const series = seriesOf(points);
  const label = (k: string) => humanize(k) + (unit && isAmount(k) ? ` (${unit})` : '');
  return (
    <Card title={<h2 style={{ fontSize: 16, margin: 0 }}>{title}</h2>}>
      <figure aria-label={title} style={{ margin: 0 }}>
        {points.length === 0 || series.length === 0 ? (
          <Empty description="No data yet" />
        ) : (
          <ResponsiveContainer width="100%" height={280}>
            {kind === 'line' ? (
              <LineChart data={points} margin={{ top: 8, right: 16, left: 0, bottom: 8 }}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="day" tick={{ fill: '#333' }} />
                <YAxis tick={{ fill: '#333' }} />
                <Tooltip />
                <Legend />
                {series.map((s, i) => (
                  <Line
                    key={s}
                    type="monotone"
                    dataKey={s}
                    name={label(s)}
                    stroke={SERIES_COLORS[i % SERIES_COLORS.length]}
                    dot={false}
                  />
                ))}
              </LineChart>
            ) : (
              <BarChart data={points} margin={{ top: 8, right: 16, left: 0, bottom: 8 }}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="day" tick={{ fill: '#333' }} />
                <YAxis tick={{ fill: '#333' }} />
                <Tooltip />
                <Legend />
                {series.map((s, i) => (
                  <Bar key={s} dataKey={s} name={label(s)} fill={SERIES_COLORS[i % SERIES_COLORS.length]} />
                ))}
              </BarChart>
            )}
          </ResponsiveContainer>
        )}
      </figure>
    </Card>
  );
}

export function HomePage() {
  const overview = useApiData<Overview>('/overview');
  const data = overview.data;
  const days = data?.days ?? [];
  const channels: Row[] = data?.by_channel ?? [];
  const channelColumns = [...new Set(channels.flatMap((r) => Object.keys(r)))];
  const channelPoints = channels.map((r) => {
    const name = [r.channel_code, r.pay_method].filter((x) => typeof x === 'string').join(' / ') || '—';
    const point: Record<string, string | number> = { day: name };
    for (const [key, value] of numbersOf(r)) if (AMOUNTS.includes(key)) point[key] = value / 100;
    return point;
  });

  return (
    <>
      <PageHeader title="Home" />
      <ErrorAlert error={overview.error} onRetry={overview.reload} />
      {overview.loading && !data ? (
        <Skeleton active />
      ) : (
        <>
          <section aria-labelledby="exceptions-heading" style={{ marginBottom: 24 }}>
            <Typography.Title level={2} id="exceptions-heading" style={{ fontSize: 18 }}>
              Open exceptions
            </Typography.Title>
            <Grid gutter={[16, 16]}>
              {(data?.exceptions ?? []).map(({ kind, count }) => {
                const link = EXCEPTION_LINKS[kind];
                return (
                  <Col key={kind} xs={24} sm={12} lg={8} xl={6}>
                    <Card data-testid={`exception-${kind}`}>
                      <Statistic title={link.label} value={count} />
                      <Link to={link.to} data-testid={`exception-link-${kind}`}>
                        Show {link.label.toLowerCase()}
                      </Link>
                    </Card>
                  </Col>
                );
              })}
            </Grid>
          </section>

          <section aria-labelledby="today-heading" style={{ marginBottom: 24 }}>
            <Typography.Title level={2} id="today-heading" style={{ fontSize: 18 }}>
              Today{typeof data?.today?.date === 'string' ? ` (${data.today.date})` : ''}
            </Typography.Title>
            <Grid gutter={[16, 16]}>
              {numbersOf(data?.today).map(([key, value]) => (
                <Col key={key} xs={24} sm={12} lg={8} xl={6}>
                  <Card data-testid={`today-${key}`}>
                    <Statistic
                      title={humanize(key) + (isAmount(key) ? ' (yuan)' : '')}
                      value={isAmount(key) ? yuan(value) : isRatio(key) ? percent(value) : value}
                    />
                  </Card>
                </Col>
              ))}
              {numbersOf(data?.today).length === 0 && (
                <Col span={24}>
                  <Empty description="Nothing today yet" />
                </Col>
              )}
            </Grid>
          </section>

          <section aria-labelledby="days-heading" style={{ marginBottom: 24 }}>
            <Typography.Title level={2} id="days-heading" style={{ fontSize: 18 }}>
              The last 30 days
            </Typography.Title>
            {data?.time_zone && (
              <Typography.Paragraph type="secondary">
                Days are counted in {data.time_zone}.
              </Typography.Paragraph>
            )}
            <Grid gutter={[16, 16]}>
              <Col xs={24} xl={12}>
                <Chart title="Orders and refunds per day" kind="bar" points={dayPoints(days, COUNTS)} />
              </Col>
              <Col xs={24} xl={12}>
                <Chart
                  title="Paid and refunded per day (yuan)"
                  kind="line"
                  unit="yuan"
                  points={dayPoints(days, AMOUNTS)}
                />
              </Col>
            </Grid>
          </section>

          <section aria-labelledby="channels-heading">
            <Typography.Title level={2} id="channels-heading" style={{ fontSize: 18 }}>
              By channel and pay method
            </Typography.Title>
            <Grid gutter={[16, 16]}>
              <Col span={24}>
                <Chart
                  title="Paid and refunded by channel, 30 days (yuan)"
                  kind="bar"
                  unit="yuan"
                  points={channelPoints}
                />
              </Col>
              <Col span={24}>
                <Table
                  size="small"
                  pagination={false}
                  rowKey={(r) => channelColumns.map((c) => String(r[c])).join('|')}
                  dataSource={channels}
                  columns={channelColumns.map((c) => ({
                    key: c,
                    dataIndex: c,
                    title: humanize(c) + (isAmount(c) ? ' (yuan)' : ''),
                    render: (v: unknown) =>
                      typeof v === 'number' && isAmount(c)
                        ? yuan(v)
                        : typeof v === 'number' && isRatio(c)
                          ? percent(v)
                          : String(v ?? '—'),
                  }))}
                />
              </Col>
            </Grid>
          </section>
        </>
      )}
    </>
  );
}
