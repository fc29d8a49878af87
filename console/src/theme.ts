import type { ThemeConfig } from 'antd';

// antd's default blue (#1677ff) and red carry white text at about 4:1 and its lighter greys fall
// below 4.5:1 on white: these keep every text at WCAG AA contrast (the axe check of the pages).
export const theme: ThemeConfig = {
  token: {
    colorPrimary: '#0b57d0',
    colorLink: '#0b57d0',
    colorError: '#c5221f',
    colorSuccess: '#1e7d32',
    colorWarning: '#b06000',
    colorInfo: '#0b57d0',
    colorTextTertiary: 'rgba(0, 0, 0, 0.62)',
    colorTextDescription: 'rgba(0, 0, 0, 0.62)',
    colorTextPlaceholder: 'rgba(0, 0, 0, 0.56)',
    borderRadius: 6,
  },
  components: {
    Layout: { siderBg: '#0f1f33', headerBg: '#ffffff', headerPadding: '0 24px' },
    Menu: {
      darkItemBg: '#0f1f33',
      darkSubMenuItemBg: '#0f1f33',
      darkItemColor: 'rgba(255, 255, 255, 0.82)',
      darkItemSelectedBg: '#0b57d0',
    },
  },
};
