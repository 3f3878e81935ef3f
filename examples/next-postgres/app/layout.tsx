import type { ReactNode } from 'react';

export const metadata = { title: 'churn-risk on Postgres, no worker' };

export default function RootLayout({ children }: { children: ReactNode }): ReactNode {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
