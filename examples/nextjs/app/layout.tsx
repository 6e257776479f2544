import type { ReactNode } from "react";
import { ensureSetup } from "../lib/sitefile";

export default async function RootLayout({ children }: { children: ReactNode }) {
  await ensureSetup();
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
