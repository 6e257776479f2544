// The origin the edge sits in front of: renders the sitefile page of a request with React.
// `createDecoWorkerEntry` (src/worker.ts) answers admin routes, redirects and cache hits before
// a request gets here.
import { type ResolvedSection, getSection, resolveDecoPage, runSectionLoaders } from "sitefile";
import type { ComponentType } from "react";
import { renderToString } from "react-dom/server";

async function renderSection({ component, props }: ResolvedSection): Promise<string> {
  const Section = (await getSection(component)) as ComponentType<Record<string, unknown>> | undefined;
  if (Section === undefined) return `<!-- no section module for ${component} -->`;
  return renderToString(<Section {...props} />);
}

const escape = (text: string): string =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] as string);

export const app = {
  async fetch(request: Request): Promise<Response> {
    const page = await resolveDecoPage(request);
    if (page.page === null) return new Response("Not found", { status: 404 });
    const sections = await runSectionLoaders(page.sections, request);
    const body = (await Promise.all(sections.map(renderSection))).join("\n");
    const title = typeof page.seo?.title === "string" ? page.seo.title : "sitefile";
    const headers = new Headers({ "content-type": "text/html; charset=utf-8" });
    for (const cookie of page.effects.setCookies) headers.append("set-cookie", cookie);
    const html = `<!doctype html><html><head><title>${escape(title)}</title></head><body>${body}</body></html>`;
    return new Response(html, { status: page.notFound ? 404 : 200, headers });
  },
};
