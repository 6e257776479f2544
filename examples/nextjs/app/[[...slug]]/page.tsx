// The catch-all page: resolves the sitefile page for the request (cookies, headers and the
// full URL reach the matchers), runs section loaders and renders the sections in order.
import type { ComponentType } from "react";
import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { type ResolvedPage, resolveDecoPage, runSectionLoaders } from "sitefile";
import { ensureSetup } from "../../lib/sitefile";
import { sections } from "../../lib/sections";

interface PageProps {
  params: Promise<{ slug?: string[] }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

async function requestOf({ params, searchParams }: PageProps) {
  const { slug = [] } = await params;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(await searchParams)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(name, v);
  }
  const h = await headers();
  const path = "/" + slug.map(encodeURIComponent).join("/");
  const search = query.size ? `?${query}` : "";
  return { url: `http://${h.get("host") ?? "localhost"}${path}${search}`, headers: h };
}

async function pageFor(props: PageProps): Promise<ResolvedPage> {
  const site = await ensureSetup();
  const request = await requestOf(props);
  const page = await resolveDecoPage(request, site);
  if (page.page === null) notFound();
  page.sections = await runSectionLoaders(page.sections, request, site);
  return page;
}

export async function generateMetadata(props: PageProps): Promise<Metadata> {
  const { seo } = await pageFor(props);
  return { title: seo?.title ?? "sitefile example", description: seo?.description };
}

// `site/sections/Hero.tsx` is registered from the module keyed `./sections/Hero.tsx`.
const moduleOf = (component: string) => sections[`./${component.replace(/^site\//, "")}` as keyof typeof sections];

export default async function Page(props: PageProps) {
  const page = await pageFor(props);
  const rendered = await Promise.all(
    page.sections.map(async ({ component, props: sectionProps }, index) => {
      const load = moduleOf(component);
      if (!load) return <div key={index} data-unknown-section={component} />;
      const Section = (await load()).default as unknown as ComponentType<Record<string, unknown>>;
      return <Section key={index} {...sectionProps} />;
    }),
  );
  return <main data-page={page.page}>{rendered}</main>;
}
