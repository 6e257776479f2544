// The origin the edge sits in front of: a Hono app with a route of its own, and every other
// path the sitefile page of the request, rendered with React. `createDecoWorkerEntry`
// (src/worker.ts) answers admin routes, redirects and cache hits before a request gets here.
import { Hono } from "hono";
import { type ResolvedSection, getSection, resolveDecoPage, runSectionLoaders } from "sitefile";
import type { ComponentType } from "react";
import { renderToString } from "react-dom/server";

async function renderSection({ component, props }: ResolvedSection): Promise<string> {
  const Section = (await getSection(component)) as ComponentType<Record<string, unknown>> | undefined;
  if (Section === undefined) return `<!-- no section module for ${component} -->`;
  return renderToString(<Section {...props} />);
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] as string);

/** The page of `request`, as an HTML response (404 with the not-found page, or plain text when
 * the site has none). */
async function renderPage(request: Request): Promise<Response> {
  const page = await resolveDecoPage(request);
  if (page.page === null) return new Response("Not found", { status: 404 });
  const sections = await runSectionLoaders(page.sections, request);
  const body = (await Promise.all(sections.map(renderSection))).join("\n");
  const title = typeof page.seo?.title === "string" ? page.seo.title : "sitefile";
  const headers = new Headers({ "content-type": "text/html; charset=utf-8" });
  for (const cookie of page.effects.setCookies) headers.append("set-cookie", cookie);
  const html = `<!doctype html><html><head><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
  return new Response(html, { status: page.notFound ? 404 : 200, headers });
}

export const app = new Hono();

// A route of the app's own, beside the site's pages.
app.get("/api/health", (c) => c.json({ ok: true }));

app.get("*", (c) => renderPage(c.req.raw));
