export interface Props {
  name: string;
  /** Set by the section loader: the path the page was requested at. */
  path?: string;
}

/** The section loader: runs after the page resolved, before it renders. */
export async function loader(props: Props, request: { url: string }): Promise<Props> {
  return { ...props, path: new URL(request.url).pathname };
}

export default function Greeting({ name, path }: Props) {
  return (
    <section data-section="greeting">
      <p>
        Hello {name}, this is {path ?? "(no loader ran)"}
      </p>
    </section>
  );
}
