import { Result } from 'antd';
import { Link } from 'react-router';
import { usePageTitle } from '../hooks';

export function NotFoundPage() {
  usePageTitle('Not found');
  return (
    <Result
      status="404"
      title={<h1 style={{ fontSize: 24, margin: 0 }}>No such page</h1>}
      extra={<Link to="/">Go to the home page</Link>}
    />
  );
}
