import { createContext, useContext } from 'react'
import type { Me } from './session'

export const MeContext = createContext<Me | null>(null)
export const useMe = (): Me => useContext(MeContext)!
