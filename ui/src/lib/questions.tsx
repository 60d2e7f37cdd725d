// Questions for the user (tool approvals, elicitation, sampling): the open ones, kept in step
// with the app's question events. One provider for the app; tool cards and dialogs read it.
import { createContext, useContext, useEffect, useState, type ReactNode } from "react";
import type { Answer, OpenQuestion } from "../bindings";
import { call, commands, events } from "../ipc";

interface Questions {
  open: OpenQuestion[];
  answer: (id: number, answer: Answer) => Promise<void>;
}

const Context = createContext<Questions>({ open: [], answer: async () => {} });

export function QuestionsProvider({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState<OpenQuestion[]>([]);
  useEffect(() => {
    let live = true;
    void call(commands.questionsPending()).then(
      (asks) => live && setOpen(asks),
      () => {},
    );
    const unlisten = events.questionEvent.listen((e) => {
      const ev = e.payload.event;
      if (ev.event === "asked") setOpen((o) => (o.some((a) => a.id === ev.data.id) ? o : [...o, ev.data]));
      else setOpen((o) => o.filter((a) => a.id !== ev.data));
    });
    return () => {
      live = false;
      void unlisten.then((f) => f());
    };
  }, []);
  const answer = async (id: number, a: Answer) => {
    setOpen((o) => o.filter((q) => q.id !== id));
    await call(commands.questionAnswer(id, a));
  };
  return <Context.Provider value={{ open, answer }}>{children}</Context.Provider>;
}

export function useQuestions(): Questions {
  return useContext(Context);
}
