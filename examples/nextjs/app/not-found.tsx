export default function NotFound() {
  return <h1 data-testid="not-found">No page here</h1>;
}
