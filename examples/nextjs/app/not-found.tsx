// Next's not-found screen, answered with status 404: the site's not-found page (the page block
// with "notFound": true, .platform/blocks/pages-not-found.json), or this heading for a site
// without one.
import { page } from "../lib/page";

export default function NotFound() {
  return (
    <page.NotFound>
      <h1 data-testid="not-found">No page here</h1>
    </page.NotFound>
  );
}
