import { Button, Checkbox, DatePicker, Form, Input, InputNumber, Select, Space } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { instantsToRange, rangeToInstants, toFen, toYuan } from '../format';

type Option = string | { value: string; label: string };

/** One filter of a list page; its value in the URL is the API's own parameter. */
export type FilterField =
  | { kind: 'text'; name: string; label: string }
  | { kind: 'select'; name: string; label: string; options: readonly Option[] }
  | { kind: 'range'; label: string }
  | { kind: 'amount'; name: string; label: string }
  | { kind: 'checkbox'; name: string; label: string }
  | { kind: 'date'; name: string; label: string };

type FormValues = Record<string, unknown>;

function toForm(fields: readonly FilterField[], filters: Record<string, string>): FormValues {
  const values: FormValues = {};
  for (const f of fields) {
    switch (f.kind) {
      case 'range':
        values.range = instantsToRange(filters.from, filters.to);
        break;
      case 'amount': {
        const fen = Number(filters[f.name]);
        values[f.name] = filters[f.name] !== undefined && Number.isFinite(fen) ? toYuan(fen) : undefined;
        break;
      }
      case 'checkbox':
        values[f.name] = filters[f.name] === 'true';
        break;
      case 'date':
        values[f.name] = filters[f.name] ? dayjs(filters[f.name]) : undefined;
        break;
      default:
        values[f.name] = filters[f.name];
    }
  }
  return values;
}

function toFilters(fields: readonly FilterField[], values: FormValues): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const f of fields) {
    switch (f.kind) {
      case 'range':
        Object.assign(out, rangeToInstants(values.range as [Dayjs | null, Dayjs | null] | null));
        break;
      case 'amount': {
        const v = values[f.name];
        out[f.name] = typeof v === 'number' ? String(toFen(v)) : undefined;
        break;
      }
      case 'checkbox':
        out[f.name] = values[f.name] ? 'true' : undefined;
        break;
      case 'date': {
        const v = values[f.name] as Dayjs | null | undefined;
        out[f.name] = v ? v.format('YYYY-MM-DD') : undefined;
        break;
      }
      default: {
        const v = values[f.name];
        out[f.name] = typeof v === 'string' && v.trim() ? v.trim() : undefined;
      }
    }
  }
  return out;
}

const optionOf = (o: Option) => (typeof o === 'string' ? { value: o, label: o } : o);

/**
 * A list's filter form. It shows what the URL says and writes what is searched back to it;
 * parameters it does not show (a fixed tab's) are kept.
 */
export function FilterBar({
  name,
  fields,
  filters,
  onSearch,
  keep = [],
}: {
  /** Unique on the page: the fields' ids start with it. */
  name: string;
  fields: readonly FilterField[];
  filters: Record<string, string>;
  onSearch: (filters: Record<string, string | undefined>) => void;
  /** URL parameters this form leaves as they are. */
  keep?: readonly string[];
}) {
  const kept = Object.fromEntries(keep.map((k) => [k, filters[k]]));
  return (
    <Form
      name={name}
      layout="inline"
      role="search"
      aria-label="Filters"
      // A new form whenever the URL changes (a link, the back button, a tab), showing what it says.
      key={JSON.stringify(filters)}
      initialValues={toForm(fields, filters)}
      onFinish={(values) => onSearch({ ...kept, ...toFilters(fields, values) })}
      style={{ rowGap: 12, marginBottom: 16 }}
    >
      {fields.map((f) => {
        switch (f.kind) {
          case 'text':
            return (
              <Form.Item key={f.name} name={f.name} label={f.label}>
                <Input allowClear style={{ width: 200 }} />
              </Form.Item>
            );
          case 'select':
            return (
              <Form.Item key={f.name} name={f.name} label={f.label}>
                <Select
                  allowClear
                  placeholder="Any"
                  style={{ width: 180 }}
                  options={f.options.map(optionOf)}
                />
              </Form.Item>
            );
          case 'range':
            return (
              <Form.Item key="range" name="range" label={f.label}>
                <DatePicker.RangePicker allowEmpty={[true, true]} placeholder={['From day', 'To day']} />
              </Form.Item>
            );
          case 'amount':
            return (
              <Form.Item key={f.name} name={f.name} label={f.label}>
                <InputNumber min={0} precision={2} step={1} style={{ width: 140 }} />
              </Form.Item>
            );
          case 'checkbox':
            return (
              <Form.Item key={f.name} name={f.name} valuePropName="checked">
                <Checkbox>{f.label}</Checkbox>
              </Form.Item>
            );
          case 'date':
            return (
              <Form.Item key={f.name} name={f.name} label={f.label}>
                <DatePicker />
              </Form.Item>
            );
        }
      })}
      <Form.Item>
        <Space>
          <Button type="primary" htmlType="submit" data-testid={`${name}-search`}>
            Search
          </Button>
          <Button htmlType="button" onClick={() => onSearch(kept)} data-testid={`${name}-reset`}>
            Reset
          </Button>
        </Space>
      </Form.Item>
    </Form>
  );
}
