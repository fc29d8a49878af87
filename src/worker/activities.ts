// The activities are composed in src/activities. This name of their type is kept only for the
// order workflow, which still imports it from here; it goes once that workflow names its own
// OrderActivities (modules/orders).
export type { Activities } from '../activities';
