import '@mantine/core/styles.css'
import '@mantine/notifications/styles.css'
import '@mantine/dropzone/styles.css'
import { createTheme, MantineProvider } from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { Router } from 'wouter'
import { App } from './App'
import { BASE } from './session'

const theme = createTheme({ primaryColor: 'indigo', defaultRadius: 'sm' })

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme}>
      <Notifications position="top-right" />
      <Router base={BASE}>
        <App />
      </Router>
    </MantineProvider>
  </StrictMode>,
)
