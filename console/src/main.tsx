import '@mantine/core/styles.css'
import '@mantine/notifications/styles.css'
import '@mantine/dropzone/styles.css'
import {
  Alert,
  Badge,
  type CSSVariablesResolver,
  createTheme,
  MantineProvider,
  Modal,
  Notification,
} from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { Router } from 'wouter'
import { App } from './App'
import { BASE } from './session'

// Shades and text colours chosen for WCAG AA contrast (axe-core checks every page in the browser tests).
const theme = createTheme({
  primaryColor: 'indigo',
  primaryShade: { light: 9, dark: 7 },
  autoContrast: true,
  defaultRadius: 'sm',
  components: {
    Badge: Badge.extend({ defaultProps: { variant: 'filled' } }),
    Notification: Notification.extend({
      defaultProps: { closeButtonProps: { 'aria-label': 'Dismiss this message' } },
      styles: { description: { color: 'var(--mantine-color-black)' } },
    }),
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    Alert: Alert.extend({
      styles: { title: { color: 'var(--mantine-color-black)' }, message: { color: 'var(--mantine-color-black)' } },
    }),
  },
})
const contrast: CSSVariablesResolver = () => ({
  variables: {},
  light: {
    '--mantine-color-dimmed': 'var(--mantine-color-gray-7)',
    '--mantine-color-error': 'var(--mantine-color-red-9)',
  },
  dark: {},
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} cssVariablesResolver={contrast}>
      <Notifications position="top-right" />
      <Router base={BASE}>
        <App />
      </Router>
    </MantineProvider>
  </StrictMode>,
)
