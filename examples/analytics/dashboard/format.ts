/** How the page writes amounts, counts and months. */
const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 })
const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" })
const compactMoney = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", notation: "compact" })
const count = new Intl.NumberFormat("en-US")
const monthName = new Intl.DateTimeFormat("en-US", { month: "short", timeZone: "UTC" })

export const formatMoney = (value: unknown): string => money.format(Number(value))
/** An order's amount, to the cent. */
export const formatAmount = (value: unknown): string => cents.format(Number(value))
export const formatCompactMoney = (value: unknown): string => compactMoney.format(Number(value))
export const formatCount = (value: unknown): string => count.format(Number(value))
/** `2025-03-01` → `Mar` */
export const formatMonth = (value: unknown): string => monthName.format(new Date(`${String(value)}T00:00:00Z`))
