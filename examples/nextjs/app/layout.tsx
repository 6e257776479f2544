// The root layout: html and body, the live-controls script (press `.` to open the site in the
// editor) and, when PLATFORM_ANALYTICS_ENABLED=true, the first-party analytics tag.
import type { ReactNode } from "react";
import { DecoRootLayout } from "sitefile/layout";
import { ensureSetup } from "../lib/sitefile";

export default async function RootLayout({ children }: { children: ReactNode }) {
  await ensureSetup();
  return <DecoRootLayout siteName="sitefile-example">{children}</DecoRootLayout>;
}
