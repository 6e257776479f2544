// The catch-all page: resolves the sitefile page for the request (cookies, headers and the
// full URL reach the matchers), runs section loaders and renders the sections in order.
import { type ComponentType, cache } from "react";
import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { type ResolvedPage, getSection, resolveDecoPage, runSectionLoaders } from "sitefile";
import { ensureSetup } from "../../lib/sitefile";

interface PageProps {
  params: Promise<{ slug?: string[] }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

/** The URL of the request being rendered. */
async function urlOf({ params, searchParams }: PageProps): Promise<string> {
  const { slug = [] } = await params;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(await searchParams)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(name, v);
  }
  const host = (await headers()).get("host") ?? "localhost";
  const path = "/" + slug.map(encodeURIComponent).join("/");
  return `http://${host}${path}${query.size ? `?${query}` : ""}`;
}

/** The page for a URL, resolved once per request (metadata and page share it). */
const pageFor = cache(async (url: string): Promise<ResolvedPage | null> => {
  const site = await ensureSetup();
  const request = { url, headers: await headers() };
  const page = await resolveDecoPage(request, site);
  if (page.page === null) return null;
  page.sections = await runSectionLoaders(page.sections, request, site);
  return page;
});

export async function generateMetadata(props: PageProps): Promise<Metadata> {
  const page = await pageFor(await urlOf(props));
  const seo = page?.seo as { title?: string; description?: string } | null | undefined;
  return { title: seo?.title ?? "sitefile example", description: seo?.description };
}

export default async function Page(props: PageProps) {
  const page = await pageFor(await urlOf(props));
  if (page === null) notFound();
  const site = await ensureSetup();
  const rendered = await Promise.all(
    page.sections.map(async ({ component, props: sectionProps }, index) => {
      // The component of the module registered for `component` in lib/sections.ts.
      const Section = (await getSection(component, site)) as ComponentType<Record<string, unknown>> | undefined;
      if (!Section) return <div key={index} data-unknown-section={component} />;
      return <Section key={index} {...sectionProps} />;
    }),
  );
  return <main data-page={page.page}>{rendered}</main>;
}
