/** Example products, as a commerce loader would fetch them. */
export interface Props {
  /** How many products. */
  count?: number;
}

/** The loader content points at (`site/loaders/products.ts`), also invokable through
 * /platform/invoke. */
export default async function products(props: Props) {
  return Array.from({ length: props.count ?? 3 }, (_, i) => ({ name: `Product ${i + 1}`, price: 10 * (i + 1) }));
}
